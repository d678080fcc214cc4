#!/usr/bin/env Rscript
# Benchmark R forecast::ets() on series given as CSV lines "period,horizon,y1,y2,...".
# Usage: Rscript scripts/r/bench-ets.R IN.csv OUT.csv
# Writes one line of point forecasts per series to OUT.csv and prints
# "seconds <elapsed>" for the fitting+forecast loop only (reading and writing excluded).
# Used by bench/engine-vs-r.ts; defaults of ets() throughout (model "ZZZ", AICc selection).
suppressPackageStartupMessages(library(forecast))
args <- commandArgs(trailingOnly = TRUE)
lines <- readLines(args[1])
series <- lapply(strsplit(lines, ",", fixed = TRUE), as.numeric)
out <- vector("list", length(series))
t0 <- proc.time()[["elapsed"]]
for (i in seq_along(series)) {
  s <- series[[i]]
  y <- ts(s[-(1:2)], frequency = s[1])
  out[[i]] <- forecast(ets(y), h = s[2])$mean
}
elapsed <- proc.time()[["elapsed"]] - t0
writeLines(vapply(out, function(f) paste(format(as.numeric(f), digits = 15), collapse = ","), ""), args[2])
cat(sprintf("seconds %.6f\n", elapsed))
