# Golden fixtures for the ARIMA engine (src/engine/models/arima), produced once with
# R 4.2 + forecast 8.20:  Rscript scripts/r/arima-fixtures.R  (from the repo root).
# Writes test/fixtures/r/arima-fixed.json, arima-auto.json and arima-m3.json.
suppressMessages({ library(forecast); library(jsonlite) })
# Optional arguments pick parts: fixed auto m3 tests (default: all)
args <- commandArgs(trailingOnly = TRUE)
parts <- if (length(args)) args else c("fixed", "auto", "m3", "tests")

pack <- function(fit, h, x) {
  fc <- forecast(fit, h = h, level = 95)
  list(
    y = as.numeric(x), period = frequency(x),
    order = as.integer(fit$arma[c(1, 6, 2)]), seasonal = as.integer(fit$arma[c(3, 7, 4)]),
    coef = as.list(fit$coef), sigma2 = fit$sigma2, loglik = fit$loglik,
    aic = fit$aic, aicc = fit$aicc, bic = fit$bic, h = h,
    mean = as.numeric(fc$mean), lower95 = as.numeric(fc$lower[, 1]), upper95 = as.numeric(fc$upper[, 1]),
    fitted = as.numeric(fitted(fit)), method = forecast:::arima.string(fit)
  )
}

ap <- log(AirPassengers)
if ("fixed" %in% parts) {
www_na <- WWWusage; www_na[c(20, 21, 55)] <- NA
usa_na <- USAccDeaths; usa_na[c(30, 31)] <- NA
fixed <- list(
  lh_100 = pack(Arima(lh, c(1, 0, 0)), 10, lh),
  lh_101 = pack(Arima(lh, c(1, 0, 1)), 10, lh),
  usaccdeaths_011_011 = pack(Arima(USAccDeaths, c(0, 1, 1), seasonal = c(0, 1, 1)), 24, USAccDeaths),
  wwwusage_310 = pack(Arima(WWWusage, c(3, 1, 0)), 10, WWWusage),
  wwwusage_111_drift = pack(Arima(WWWusage, c(1, 1, 1), include.drift = TRUE), 10, WWWusage),
  logairpassengers_011_011 = pack(Arima(ap, c(0, 1, 1), seasonal = c(0, 1, 1)), 24, ap),
  logairpassengers_210_110 = pack(Arima(ap, c(2, 1, 0), seasonal = c(1, 1, 0)), 24, ap),
  lakehuron_200_mean = pack(Arima(LakeHuron, c(2, 0, 0)), 10, LakeHuron),
  wwwusage_na_111 = pack(Arima(www_na, c(1, 1, 1)), 10, www_na),
  usaccdeaths_na_011_011 = pack(Arima(usa_na, c(0, 1, 1), seasonal = c(0, 1, 1)), 12, usa_na)
)
write_json(fixed, "test/fixtures/r/arima-fixed.json", digits = NA, auto_unbox = TRUE, pretty = FALSE)
}
if ("auto" %in% parts) {
auto <- list(
  lh = pack(auto.arima(lh), 10, lh),
  wwwusage = pack(auto.arima(WWWusage), 10, WWWusage),
  usaccdeaths = pack(auto.arima(USAccDeaths), 24, USAccDeaths),
  logairpassengers = pack(auto.arima(ap), 24, ap),
  airpassengers = pack(auto.arima(AirPassengers), 24, AirPassengers),
  lakehuron = pack(auto.arima(LakeHuron), 10, LakeHuron),
  nottem = pack(auto.arima(nottem), 24, nottem)
)
write_json(auto, "test/fixtures/r/arima-auto.json", digits = NA, auto_unbox = TRUE, pretty = FALSE)
}

# M3: a fixed sample (every 60th series) with auto.arima, plus R timing on monthly
lines <- readLines("/work/shared/data/m3/m3.jsonl")
m3 <- lapply(lines, fromJSON)
if ("m3" %in% parts) {
idx <- seq(1, length(m3), by = 60)
out <- list()
for (i in idx) {
  s <- m3[[i]]
  x <- ts(s$train, frequency = s$period)
  fit <- auto.arima(x)
  r <- pack(fit, s$horizon, x)
  r$fitted <- NULL
  r$id <- s$id
  out[[s$id]] <- r
}
monthly <- Filter(function(s) s$group == "monthly", m3)[1:100]
t_arima <- system.time(for (s in monthly) auto.arima(ts(s$train, frequency = 12)))[["elapsed"]]
t_ets <- system.time(for (s in monthly) ets(ts(s$train, frequency = 12)))[["elapsed"]]
write_json(list(series = out, timing = list(n = length(monthly), auto_arima_seconds = t_arima, ets_seconds = t_ets)),
           "test/fixtures/r/arima-m3.json", digits = NA, auto_unbox = TRUE, pretty = FALSE)
}

# Unit-root tests: KPSS statistic (urca), ndiffs, seasonal strength (seas.heuristic) and nsdiffs
if ("tests" %in% parts) {
  pick <- Filter(function(s) s$period > 1, m3)[seq(1, 1602, by = 40)]
  tests <- lapply(pick, function(s) {
    x <- ts(s$train, frequency = s$period)
    list(id = s$id, period = s$period, y = s$train, kpss = urca::ur.kpss(as.numeric(x), type = "mu", use.lag = trunc(3 * sqrt(length(x)) / 13))@teststat[1],
         ndiffs = ndiffs(x), strength = forecast:::seas.heuristic(x), nsdiffs = nsdiffs(x))
  })
  write_json(tests, "test/fixtures/r/arima-tests.json", digits = NA, auto_unbox = TRUE, pretty = FALSE)
}
