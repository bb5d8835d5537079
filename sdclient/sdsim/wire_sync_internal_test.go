package sdsim

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/deskbot/deskbot/sdclient"
)

// jsonFields lists the JSON names of a struct type's fields, the fields of
// embedded structs included, "-" left out.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			out = append(out, jsonFields(ft)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// The simulator's wire types are a protocol fake of the client's: every
// JSON field of a client type is served by the simulator's counterpart,
// and every field the simulator serves is one the client decodes, but for
// the listed exceptions.
func TestWireTypesInStep(t *testing.T) {
	for _, p := range wirePairs {
		client, sim := jsonFields(reflect.TypeOf(p.client)), jsonFields(reflect.TypeOf(p.sim))
		for _, f := range client {
			if !slices.Contains(sim, f) && !slices.Contains(clientOnly[p.name], f) {
				t.Errorf("%s: the client decodes %q, which the simulator's type does not serve", p.name, f)
			}
		}
		for _, f := range sim {
			if !slices.Contains(client, f) {
				t.Errorf("%s: the simulator serves %q, which the client's type does not decode", p.name, f)
			}
		}
		for _, f := range clientOnly[p.name] {
			if slices.Contains(sim, f) || !slices.Contains(client, f) {
				t.Errorf("%s: the exception for %q is stale", p.name, f)
			}
		}
	}
}

// clientOnly are fields the client decodes and the simulator does not
// serve, with why. The vendor's schema lacks them, so the contract check of
// every exchange (sdclient/contract_test.go) refuses a simulator serving
// them; the client reads them should a desk send them.
var clientOnly = map[string][]string{
	"Change":  {"change_window_id"},
	"Problem": {"associated_change"},
}

// wirePairs pairs each client wire type with the simulator's.
var wirePairs = []struct {
	name        string
	client, sim any
}{
	{"Ticket", sdclient.Ticket{}, ticketWire{}},
	{"TicketStats", sdclient.TicketStats{}, statsWire{}},
	{"TicketRequester", sdclient.TicketRequester{}, personWire{}},
	{"Conversation", sdclient.Conversation{}, conversationWire{}},
	{"Agent", sdclient.Agent{}, Agent{}},
	{"AgentRole", sdclient.AgentRole{}, AgentRole{}},
	{"Requester", sdclient.Requester{}, Requester{}},
	{"Group", sdclient.Group{}, Group{}},
	{"Department", sdclient.Department{}, Department{}},
	{"Asset", sdclient.Asset{}, Asset{}},
	{"Change", sdclient.Change{}, Change{}},
	{"Problem", sdclient.Problem{}, Problem{}},
	{"Release", sdclient.Release{}, Release{}},
	{"TimeEntry", sdclient.TimeEntry{}, TimeEntry{}},
	{"SolutionCategory", sdclient.SolutionCategory{}, solutionCategory{}},
	{"SolutionFolder", sdclient.SolutionFolder{}, solutionFolder{}},
	{"SolutionArticle", sdclient.SolutionArticle{}, solutionArticle{}},
	{"Product", sdclient.Product{}, product{}},
	{"Vendor", sdclient.Vendor{}, vendor{}},
	{"CannedResponse", sdclient.CannedResponse{}, cannedResponse{}},
	{"FormField", sdclient.FormField{}, formField{}},
	{"FieldChoice", sdclient.FieldChoice{}, choice{}},
}
