package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeCICommands returns the command lines of the README's "Rules in CI"
// example: the lines of the first sh block under that heading.
func readmeCICommands(t *testing.T, readme string) [][]string {
	t.Helper()
	_, sec, ok := strings.Cut(readme, "\n### Rules in CI\n")
	if !ok {
		t.Fatal(`README.md has no "### Rules in CI" section`)
	}
	_, block, ok := strings.Cut(sec, "```sh\n")
	if !ok {
		t.Fatal(`README.md's "Rules in CI" has no sh block`)
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal(`README.md's "Rules in CI" sh block is not closed`)
	}
	var cmds [][]string
	for _, line := range strings.Split(block, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if f[0] != "deskbot" || strings.ContainsAny(line, `'"$|&;<>*`) {
			t.Fatalf("README.md's Rules in CI: %q is not a plain deskbot command this test can run", line)
		}
		cmds = append(cmds, f[1:])
	}
	if len(cmds) == 0 {
		t.Fatal("README.md's Rules in CI: no commands")
	}
	return cmds
}

// The README's "Rules in CI" example works as written, from the root of a
// clone: each command exits 0, and rules test shows rules firing.
func TestReadmeRulesInCI(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCICommands(t, string(data))
	state := filepath.Join(t.TempDir(), "state.db")
	t.Chdir("../..")
	for _, args := range cmds {
		code, stdout, stderr := runRules(t, map[string]string{"DESKBOT_STATE": state}, args...)
		if code != 0 {
			t.Fatalf("deskbot %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
		}
		if len(args) > 1 && args[0] == "rules" && args[1] == "test" && !strings.Contains(stdout, " fires (once:") {
			t.Errorf("deskbot %s: no rule fires:\n%s", strings.Join(args, " "), stdout)
		}
	}
}

// rules test refuses a fixture ticket without a field the desk always
// sends, naming it.
func TestRulesTestRefusesIncompleteTickets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	tickets := filepath.Join(dir, "tickets.json")
	os.WriteFile(file, []byte("version: 1\nrules:\n  - name: a\n    query: \"priority:4\"\n    actions: [{note: \"hi\"}]\n"), 0o600)
	os.WriteFile(tickets, []byte(`[{"id": 1, "subject": "a", "priority": 4, "status": 2, "requester_id": 5, "created_at": "2025-03-10T09:00:00Z", "updated_at": "2025-03-10T09:00:00Z"},
 {"id": 2, "subject": "b", "priority": 4, "status": 2}]`), 0o600)
	code, stdout, stderr := runRules(t, map[string]string{}, "rules", "test", file, "--tickets", tickets)
	want := "rules test: " + tickets + ": read tickets: ticket [1] (id 2): missing required fields requester_id, created_at, updated_at"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr with %s", code, stdout, stderr, want)
	}
}

// Issue 23, 4: the README's "try your own rules" commands work as written
// on a fresh clone: every file they name is in the repository or made by
// an earlier line of the block, and the rules file they run loads.
func TestReadmeTryYourOwnRulesOnAFreshClone(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\nTo try your own rules")
	if !ok {
		t.Fatal(`README.md has no "To try your own rules" paragraph`)
	}
	_, block, _ := strings.Cut(sec, "```sh\n")
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal(`README.md's "try your own rules" has no closed sh block`)
	}
	tracked := trackedFiles(t)
	clone := t.TempDir() // what the block made, beside the clone's files
	have := func(name string) string {
		if p := filepath.Join(clone, name); fileExists(p) {
			return p
		}
		if tracked[name] {
			return filepath.Join("../..", name)
		}
		return ""
	}
	ran := 0
	for _, line := range strings.Split(block, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "cp":
			if len(f) != 3 || have(f[1]) == "" {
				t.Fatalf("%q: copies what a fresh clone does not have", line)
			}
			src, err := os.ReadFile(have(f[1]))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(clone, f[2]), src, 0o600); err != nil {
				t.Fatal(err)
			}
		case strings.Contains(line, "DESKBOT_RULES="):
			for _, w := range f {
				if name, ok := strings.CutPrefix(w, "DESKBOT_RULES="); ok {
					path := have(name)
					if path == "" {
						t.Fatalf("%q: DESKBOT_RULES names %s, which a fresh clone does not have and no line of the block makes", line, name)
					}
					if code, stdout, stderr := runRules(t, map[string]string{}, "rules", "check", path); code != 0 {
						t.Fatalf("rules check %s: exit %d\n%s%s", name, code, stdout, stderr)
					}
					ran++
				}
			}
		}
	}
	if ran == 0 {
		t.Fatal(`README.md's "try your own rules" block sets no DESKBOT_RULES`)
	}
}

// trackedFiles is what a fresh clone holds at its root: the files git
// tracks (a working copy may hold others, such as a rules.yaml of one's own).
func trackedFiles(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command("git", "-C", "../..", "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout?)", err)
	}
	files := map[string]bool{}
	for _, f := range strings.Split(string(out), "\n") {
		files[f] = true
	}
	return files
}
