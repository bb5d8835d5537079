package rules

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

var updateReference = flag.Bool("update", false, "rewrite docs/rules-reference.md")

const referencePath = "../docs/rules-reference.md"

// docs/rules-reference.md is what WriteReference makes of the code:
// regenerate it with go test ./rules -run TestFieldReference -update.
func TestFieldReference(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReference(&b); err != nil {
		t.Fatal(err)
	}
	if *updateReference {
		if err := os.MkdirAll("../docs", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(referencePath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v (go test ./rules -run TestFieldReference -update writes it)", err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Errorf("%s is out of date: go test ./rules -run TestFieldReference -update", referencePath)
	}
}

// Every field of ticket has its line in the reference, every line names a
// field, and every function's example compiles.
func TestReferenceCoversTheCode(t *testing.T) {
	fields := map[string]bool{}
	for _, f := range envFields(reflect.TypeOf(TicketEnv{}), "") {
		fields[f.Name] = true
		if fieldDocs[f.Name] == "" {
			t.Errorf("ticket.%s has no entry in fieldDocs", f.Name)
		}
		if !strings.Contains(f.Name, ".") {
			if _, ok := ticketFieldGetters[f.Name]; !ok {
				t.Errorf("ticket.%s has no entry in ticketFieldGetters (Explain)", f.Name)
			}
		}
		if _, errs := compileExpr("ticket."+f.Name, false); len(errs) > 0 {
			t.Errorf("ticket.%s: %v", f.Name, errs)
		}
	}
	for name := range fieldDocs {
		if !fields[name] {
			t.Errorf("fieldDocs documents ticket.%s, which does not exist", name)
		}
	}
	for _, f := range funcDocs {
		if _, errs := compileExpr(f.example, false); len(errs) > 0 {
			t.Errorf("example of %s: %v", f.sig, errs)
		}
	}
}

// The README links the reference.
func TestReadmeLinksReference(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/rules-reference.md)") {
		t.Error("README.md does not link docs/rules-reference.md")
	}
}

// Where agent_id and responder_id are used in each other's place, the
// error says which name goes where.
func TestAssigneeNameHints(t *testing.T) {
	_, err := Load("f.yaml", []byte(ruleFile(
		"  - name: x",
		`    query: "responder_id:0"`,
		`    if: "ticket.agent_id == 0"`,
		"    actions:",
		"      - set: {agent_id: 3}",
	)))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`f.yaml:5:13: rule "x": query: unknown field "responder_id": in queries the assigned agent is agent_id (agent_id:0 or agent_id:null when unassigned); responder_id is its name in expressions (ticket.responder_id) and in set: {responder_id: ID}`,
		`f.yaml:6:17: rule "x": if: type ticket has no field agent_id: in expressions the assigned agent is ticket.responder_id (0 when unassigned; ticket.agent.name is their name); agent_id is its name in queries`,
		`f.yaml:8:15: rule "x": unknown key "agent_id" in set (want one of status, priority, group_id, responder_id, tags, type, category, sub_category, custom_fields): set the assigned agent with responder_id: ID or assign: E-MAIL; agent_id is its name in queries`,
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	for src, hint := range map[string]string{
		"ticket.description":    "write ticket.description_text",
		"ticket.requester_name": "write ticket.requester.name",
		"ticket.group_name":     "write ticket.group.name",
	} {
		if _, errs := compileExpr(src, false); len(errs) == 0 || !strings.Contains(errs[0].Msg, hint) {
			t.Errorf("%s: %v, want %q", src, errs, hint)
		}
	}
}
