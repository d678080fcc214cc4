// A jest results processor for scripts/run-tests.js: writes the run's aggregated results as JSON
// to the file named by FORECAST_JEST_RESULTS (the counts and skipped tests it prints per pass).
'use strict';
const fs = require('node:fs');

module.exports = (results) => {
  if (process.env.FORECAST_JEST_RESULTS) fs.writeFileSync(process.env.FORECAST_JEST_RESULTS, JSON.stringify(results));
  return results;
};
