# Golden values for the `autoreg` family (src/engine/models/autoreg): a subset autoregression
# fitted by least squares with lm() on an explicit lag matrix, and its recursive forecasts.
# Run: Rscript scripts/r/autoreg-fixtures.R > test/fixtures/r/autoreg-lm.json
suppressMessages(library(forecast))

lag_fit <- function(x, lags, h) {
  n <- length(x)
  L <- max(lags)
  X <- sapply(lags, function(l) x[(L + 1 - l):(n - l)])
  y <- x[(L + 1):n]
  fit <- lm(y ~ X)
  co <- unname(coef(fit))
  ext <- c(x, rep(NA, h))
  for (s in 1:h) {
    t <- n + s
    ext[t] <- co[1] + sum(co[-1] * ext[t - lags])
  }
  list(intercept = co[1], phi = co[-1], sigma = summary(fit)$sigma, forecast = ext[(n + 1):(n + h)])
}

case <- function(name, y, lags, h, log = FALSE, difference = FALSE, period = 1, periods = list()) {
  x <- if (log) log(as.numeric(y)) else as.numeric(y)
  level <- x
  if (difference) x <- diff(x)
  f <- lag_fit(x, lags, h)
  fc <- f$forecast
  if (difference) fc <- level[length(level)] + cumsum(fc)
  if (log) fc <- exp(fc)
  list(name = name, y = as.numeric(y), period = period, periods = periods, lags = lags,
       log = log, difference = difference, h = h,
       intercept = f$intercept, phi = f$phi, sigma = f$sigma, forecast = fc)
}

taylor_part <- as.numeric(taylor)[1:1500]
cases <- list(
  case("AirPassengers log", AirPassengers, c(1, 2, 3, 11, 12, 13), 24, log = TRUE, period = 12, periods = list(12)),
  case("AirPassengers raw differenced", AirPassengers, c(1, 2, 3, 11, 12, 13), 12, difference = TRUE, period = 12, periods = list(12)),
  case("taylor 1500 half-hours log", taylor_part, c(1, 2, 3, 47, 48, 49, 335, 336, 337), 96, log = TRUE, period = 48, periods = list(48, 336))
)
cat(jsonlite::toJSON(list(generated_by = "scripts/r/autoreg-fixtures.R", r = R.version.string, cases = cases),
                     auto_unbox = TRUE, digits = NA, pretty = FALSE))
