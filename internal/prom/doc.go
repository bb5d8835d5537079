// Package prom builds the Prometheus collectors of deskbot's packages from
// a name and its help (and labels), the one shape that feed, cycle and
// scheduler each wrote out again for every collector. Each package still
// declares, names and registers its own collectors.
//
//	m.ticks = prom.Counter("deskbot_…_total", "What it counts.")
//	m.cycles = prom.CounterVec("deskbot_…_total", "…", "job", "outcome")
//
// It imports client_golang only.
package prom
