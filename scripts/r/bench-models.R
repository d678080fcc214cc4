#!/usr/bin/env Rscript
# Forecast series with R forecast-package methods, for bench/engine-vs-r.ts.
# Usage: Rscript scripts/r/bench-models.R IN.csv OUT.csv METHOD[,METHOD...]
#   IN.csv: one series per line, "period,horizon,y1,y2,..." (NA for a missing value).
#   METHOD: ets, arima (auto.arima), thetaf, snaive, croston; every one with its defaults.
# OUT.csv: per series and method, lines "method,index,cpu_seconds,what,v1,...,vh" where `what` is
#   mean, lo95, hi95, q90, q95 (q90/q95 = upper ends of the 80% / 90% intervals: the 0.9 and
#   0.95 quantiles of a central interval; croston has no intervals, so only its mean).
#   cpu_seconds is the process CPU time (user + system) of that series' fit and forecast.
#   A fit that fails falls back to naive() (what = mean etc. as usual) and the line "method,index,
#   0,failed,<message>" is written first.
suppressPackageStartupMessages(library(forecast))
args <- commandArgs(trailingOnly = TRUE)
lines <- readLines(args[1])
methods <- strsplit(args[3], ",", fixed = TRUE)[[1]]
series <- lapply(strsplit(lines, ",", fixed = TRUE), function(v) suppressWarnings(as.numeric(v)))
levels <- c(80, 90, 95)

fit_one <- function(method, y, h) {
  switch(method,
    ets = forecast(ets(y), h = h, level = levels),
    arima = forecast(auto.arima(y), h = h, level = levels),
    thetaf = thetaf(y, h = h, level = levels),
    snaive = snaive(y, h = h, level = levels),
    croston = croston(y, h = h),
    stop(paste("unknown method", method))
  )
}

cpu <- function() {
  t <- proc.time()
  t[["user.self"]] + t[["sys.self"]]
}

num <- function(v) paste(format(as.numeric(v), digits = 15), collapse = ",")

con <- file(args[2], "w")
for (method in methods) {
  for (i in seq_along(series)) {
    s <- series[[i]]
    y <- ts(s[-(1:2)], frequency = s[1])
    h <- s[2]
    t0 <- cpu()
    fc <- tryCatch(fit_one(method, y, h), error = function(e) e)
    secs <- cpu() - t0
    if (inherits(fc, "error")) {
      msg <- gsub("[,\n]", " ", conditionMessage(fc))
      writeLines(sprintf("%s,%d,0,failed,%s", method, i, msg), con)
      fc <- naive(y, h = h, level = levels)
    }
    pre <- sprintf("%s,%d,%.6f", method, i, secs)
    writeLines(paste(pre, "mean", num(fc$mean), sep = ","), con)
    if (!is.null(fc$upper)) {
      writeLines(paste(pre, "lo95", num(fc$lower[, 3]), sep = ","), con)
      writeLines(paste(pre, "hi95", num(fc$upper[, 3]), sep = ","), con)
      writeLines(paste(pre, "q90", num(fc$upper[, 1]), sep = ","), con)
      writeLines(paste(pre, "q95", num(fc$upper[, 2]), sep = ","), con)
    }
  }
}
close(con)
