# Golden fixtures for the baseline / Theta / Croston / decomposition helpers of the engine.
# Run once from the repo root:  Rscript scripts/r/base-fixtures.R
# Writes test/fixtures/r/{naive,theta,croston,stl}-*.json. Needs R with forecast (>= 8.20) and jsonlite
# (or falls back to a tiny hand-written JSON writer below, so only base R + forecast are needed).
suppressMessages(library(forecast))
out_dir <- "test/fixtures/r"

to_json <- function(x) {
  if (is.null(x)) return("null")
  if (is.list(x)) {
    nm <- names(x)
    items <- vapply(seq_along(x), function(i) to_json(x[[i]]), "")
    if (!is.null(nm)) return(paste0("{", paste0('"', nm, '":', items, collapse = ","), "}"))
    return(paste0("[", paste(items, collapse = ","), "]"))
  }
  if (is.character(x)) return(if (length(x) == 1) paste0('"', x, '"') else paste0("[", paste0('"', x, '"', collapse = ","), "]"))
  if (is.logical(x) && length(x) == 1) return(if (x) "true" else "false")
  v <- as.numeric(x)
  s <- ifelse(is.na(v), "null", formatC(v, digits = 17, format = "g"))
  if (length(v) == 1 && is.null(dim(x)) && !inherits(x, "ts")) return(s)
  paste0("[", paste(s, collapse = ","), "]")
}
write_fixture <- function(name, obj) {
  writeLines(to_json(obj), file.path(out_dir, paste0(name, ".json")))
  cat("wrote", name, "\n")
}
bands <- function(fc) list(
  mean = as.numeric(fc$mean),
  lower80 = as.numeric(fc$lower[, 1]), upper80 = as.numeric(fc$upper[, 1]),
  lower95 = as.numeric(fc$lower[, 2]), upper95 = as.numeric(fc$upper[, 2])
)
series <- list(
  AirPassengers = AirPassengers, WWWusage = WWWusage, Nile = Nile,
  USAccDeaths = USAccDeaths, austres = austres
)

# naive / snaive / rwf(drift)
cases <- list()
for (nm in names(series)) {
  y <- series[[nm]]
  m <- frequency(y)
  h <- if (m > 1) 2 * m else 10
  case <- list(name = nm, period = m, h = h, y = as.numeric(y),
               naive = bands(naive(y, h = h)), rwdrift = bands(rwf(y, h = h, drift = TRUE)))
  if (m > 1) case$snaive <- bands(snaive(y, h = h))
  cases[[length(cases) + 1]] <- case
}
write_fixture("naive-cases", cases)

# thetaf (seasonality test: R's, squared ACFs, n > 2m)
cases <- list()
for (nm in names(series)) {
  y <- series[[nm]]
  m <- frequency(y)
  h <- if (m > 1) 2 * m else 10
  fc <- thetaf(y, h = h)
  mod <- fc$model
  alpha <- if (!is.null(mod$alpha)) mod$alpha else mod$par["alpha"]
  case <- c(list(name = nm, period = m, h = h, y = as.numeric(y),
                 alpha = as.numeric(alpha)), bands(fc))
  cases[[length(cases) + 1]] <- case
}
write_fixture("theta-thetaf", cases)

# classical decomposition (R decompose) and STL
dec <- function(y, type) {
  d <- decompose(y, type = type)
  list(figure = as.numeric(d$figure), trend = as.numeric(d$trend), seasonal = as.numeric(d$seasonal))
}
write_fixture("stl-decompose", list(
  y = as.numeric(AirPassengers), period = 12,
  multiplicative = dec(AirPassengers, "multiplicative"),
  additive = dec(AirPassengers, "additive"),
  y_odd = as.numeric(ts(as.numeric(AirPassengers)[1:70], frequency = 7)), period_odd = 7,
  additive_odd = dec(ts(as.numeric(AirPassengers)[1:70], frequency = 7), "additive")
))
stl_case <- function(y, sw, robust = FALSE) {
  f <- stl(y, s.window = sw, robust = robust)
  list(y = as.numeric(y), period = frequency(y), s_window = if (is.character(sw)) "periodic" else sw,
       robust = robust,
       seasonal = as.numeric(f$time.series[, 1]), trend = as.numeric(f$time.series[, 2]),
       remainder = as.numeric(f$time.series[, 3]))
}
write_fixture("stl-stl", list(
  stl_case(nottem, "periodic"),
  stl_case(co2, 7),
  stl_case(log(AirPassengers), 13),
  stl_case(USAccDeaths, 7, robust = TRUE)
))
tay <- msts(as.numeric(taylor)[1:2016], seasonal.periods = c(48, 336))
ms <- mstl(tay)
write_fixture("stl-mstl", list(
  y = as.numeric(tay), periods = c(48, 336),
  trend = as.numeric(ms[, "Trend"]), seasonal48 = as.numeric(ms[, "Seasonal48"]),
  seasonal336 = as.numeric(ms[, "Seasonal336"]), remainder = as.numeric(ms[, "Remainder"])
))

# Croston (alpha 0.1, R's classic form)
set.seed(1)
yi <- c(0, 0, 3, 0, 0, 0, 5, 0, 1, 0, 0, 0, 0, 2, 0, 7, 0, 0, 4, 0, 0, 0, 1, 0, 0, 6, 0, 0, 0, 2)
cr <- croston(yi, h = 5)
cr2 <- croston(yi, h = 5, alpha = 0.3)
write_fixture("croston-cases", list(
  y = yi, mean_a01 = as.numeric(cr$mean), mean_a03 = as.numeric(cr2$mean),
  fitted_a01 = as.numeric(cr$fitted)
))
