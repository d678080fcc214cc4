# Golden fixtures for the ETS engine (src/engine/models/ets), produced once with R's forecast package.
# Run from the repo root:  Rscript scripts/r/ets-fixtures.R
# Writes test/fixtures/r/ets-fits.json, ets-auto.json, ets-admissible.json, ets-initstate.json.
suppressMessages({ library(forecast); library(jsonlite) })
m3 <- lapply(readLines("/work/shared/data/m3/m3.jsonl"), fromJSON)
names(m3) <- vapply(m3, function(s) s$id, "")
m3ts <- function(id) { s <- m3[[id]]; ts(s$train, frequency = s$period) }

series <- list(
  AirPassengers = AirPassengers,
  USAccDeaths = USAccDeaths,
  USAccDeaths30 = ts(USAccDeaths[1:30], frequency = 12),
  WWWusage = WWWusage,
  N0001 = m3ts("N0001"),
  N0700 = m3ts("N0700"),
  N1402 = m3ts("N1402"),
  N2000 = m3ts("N2000")
)
meta <- list(forecast = as.character(packageVersion("forecast")), R = R.version.string)

fixed <- list(
  list("AirPassengers", "AAA", FALSE), list("AirPassengers", "MAM", FALSE), list("AirPassengers", "MAM", TRUE),
  list("AirPassengers", "MNA", FALSE), list("AirPassengers", "ANN", FALSE),
  list("USAccDeaths", "AAA", FALSE), list("USAccDeaths", "ANA", FALSE), list("USAccDeaths", "MAA", TRUE),
  list("USAccDeaths30", "ANA", FALSE),
  list("WWWusage", "ANN", FALSE), list("WWWusage", "AAN", TRUE), list("WWWusage", "MAN", FALSE),
  list("WWWusage", "MAN", TRUE), list("WWWusage", "AAN", FALSE),
  list("N0001", "AAN", FALSE), list("N0001", "MAN", FALSE), list("N0001", "MNN", FALSE),
  list("N0700", "AAA", TRUE), list("N0700", "MAM", FALSE),
  list("N1402", "ANA", FALSE), list("N1402", "MNM", FALSE), list("N1402", "AAA", TRUE),
  list("N2000", "MAM", TRUE), list("N2000", "ANA", FALSE)
)

fcout <- function(fit, h) {
  fc <- forecast(fit, h = h, level = c(80, 95))
  list(h = h, mean = as.numeric(fc$mean),
       lower80 = as.numeric(fc$lower[, 1]), upper80 = as.numeric(fc$upper[, 1]),
       lower95 = as.numeric(fc$lower[, 2]), upper95 = as.numeric(fc$upper[, 2]))
}
fitout <- function(name, fit) {
  y <- series[[name]]
  h <- if (frequency(y) > 1) 2 * frequency(y) else 10
  list(series = name, method = fit$method, loglik = fit$loglik, aic = fit$aic, aicc = fit$aicc, bic = fit$bic,
       par = as.list(fit$par[intersect(c("alpha", "beta", "gamma", "phi"), names(fit$par))]),
       initstate = as.numeric(fit$states[1, ]), laststate = as.numeric(fit$states[nrow(fit$states), ]),
       sigma2 = fit$sigma2, forecast = fcout(fit, h))
}

fits <- lapply(fixed, function(f) {
  fit <- ets(series[[f[[1]]]], model = f[[2]], damped = f[[3]])
  c(list(model = f[[2]], damped = f[[3]]), fitout(f[[1]], fit))
})

set.seed(1)
autoIds <- c(sample(names(m3)[vapply(m3, function(s) s$group == "yearly", TRUE)], 4),
             sample(names(m3)[vapply(m3, function(s) s$group == "quarterly", TRUE)], 4),
             sample(names(m3)[vapply(m3, function(s) s$group == "monthly", TRUE)], 6))
auto <- list()
for (nm in names(series)) { fit <- ets(series[[nm]]); auto[[length(auto) + 1]] <- list(series = nm, method = fit$method, aicc = fit$aicc, loglik = fit$loglik) }
for (id in autoIds) { fit <- ets(m3ts(id)); auto[[length(auto) + 1]] <- list(series = id, method = fit$method, aicc = fit$aicc, loglik = fit$loglik) }

adm <- list()
set.seed(2)
for (i in 1:400) {
  m <- sample(c(2, 4, 7, 12, 24), 1)
  damped <- runif(1) < 0.5; trend <- runif(1) < 0.7
  alpha <- runif(1, -0.2, 1.5); gamma <- runif(1, -0.2, 1.2)
  beta <- if (trend) runif(1, -0.3, 1.5) else NULL
  phi <- if (damped) runif(1, 0.5, 1.05) else NULL
  ok <- forecast:::admissible(alpha, beta, gamma, phi, m)
  adm[[i]] <- list(m = m, alpha = alpha, beta = if (is.null(beta)) NA else beta, gamma = gamma,
                   phi = if (is.null(phi)) NA else phi, ok = as.logical(ok))
}
for (i in 1:100) {  # non-seasonal
  alpha <- runif(1, -0.5, 2.5); phi <- runif(1, 0.5, 1.05); beta <- runif(1, -1, 3)
  ok <- forecast:::admissible(alpha, beta, NULL, phi, 1)
  adm[[length(adm) + 1]] <- list(m = 1, alpha = alpha, beta = beta, gamma = NA, phi = phi, ok = as.logical(ok))
}

inits <- list()
for (nm in c("AirPassengers", "USAccDeaths", "USAccDeaths30", "WWWusage", "N0001", "N1402")) {
  y <- series[[nm]]
  for (tr in c("N", "A", "M")) for (se in if (frequency(y) > 1) c("N", "A", "M") else "N") {
    inits[[length(inits) + 1]] <- list(series = nm, trend = tr, season = se,
                                       state = as.numeric(forecast:::initstate(y, tr, se)))
  }
}

dat <- lapply(series, function(y) list(period = frequency(y), y = as.numeric(y)))
w <- function(x, f) writeLines(toJSON(x, auto_unbox = TRUE, digits = NA, na = "null", pretty = FALSE), f)
w(list(meta = meta, series = dat, fits = fits), "test/fixtures/r/ets-fits.json")
w(list(meta = meta, auto = auto), "test/fixtures/r/ets-auto.json")
w(list(meta = meta, cases = adm), "test/fixtures/r/ets-admissible.json")
w(list(meta = meta, series = dat, cases = inits), "test/fixtures/r/ets-initstate.json")
