// Package planreport writes the report of `deskbot rules plan`: per rule
// what matches at its first run, what that run would post and write, how
// its cap spreads the backlog over cycles and how long the backlog takes
// to drain across rules under the request budget, and the desk requests
// an hour. The command prints it after a dry-run cycle against the desk;
// the status pages' /plan shows the same report from the running
// scheduler's memory (Scheduler.Memory, firing.PlanOutlook), so the two never disagree.
//
// # What it may import
//
// rules and scheduler (the Outlook, the drain simulation). It does no
// I/O but writing the report.
package planreport
