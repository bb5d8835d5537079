// Package benchstat holds the small statistics the benchmarks report with
// b.ReportMetric: a percentile of measured durations.
//
// It is imported by tests and benchmarks only, of any floor (bot/slackchat,
// cmd/deskbot), and imports nothing of deskbot's own.
package benchstat
