package sdsim_test

import (
	"fmt"
	"testing"

	"github.com/deskbot/deskbot/sdclient/sdsim"
)

// The resources deskbot shows people carry every field of the vendor
// documentation's examples (sdclient/decisions.md, rows 12 and 13), so the
// demo looks like a real desk. The key lists are those of the examples
// (anchors given); the desk sends blank fields as null, never omits them.
func TestDocumentedFields(t *testing.T) {
	s := newServer(t, sdsim.WithGenerated(3, 20))
	tk := get(t, s, "/tickets?per_page=1").want(t, 200).list("tickets")[0].(map[string]any)
	tid := num(tk["id"])
	agents := get(t, s, "/agents?per_page=1").want(t, 200).list("agents")
	requesters := get(t, s, "/requesters?per_page=1").want(t, 200).list("requesters")
	groups := get(t, s, "/groups?per_page=1").want(t, 200).list("groups")
	do(t, s, req{method: "POST", path: fmt.Sprintf("/tickets/%d/notes", tid), body: `{"body":"seen","private":true}`}).want(t, 201)

	tests := []struct {
		name, path, key string
		fields          []string
	}{
		{"ticket #view_a_ticket", fmt.Sprintf("/tickets/%d", tid), "ticket", []string{
			"id", "workspace_id", "subject", "description", "description_text", "status", "priority", "source", "urgency", "impact",
			"type", "requester_id", "requested_for_id", "responder_id", "group_id", "department_id", "email_config_id", "sla_policy_id",
			"category", "sub_category", "item_category", "due_by", "fr_due_by", "is_escalated", "fr_escalated", "spam", "deleted",
			"cc_emails", "fwd_emails", "reply_cc_emails", "to_emails", "custom_fields", "attachments", "tags",
			"resolution_notes", "resolution_notes_html", "created_within_business_hours", "approval_status", "approval_status_name",
			"created_at", "updated_at"}},
		{"agent #view_an_agent", fmt.Sprintf("/agents/%d", num(agents[0].(map[string]any)["id"])), "agent", []string{
			"id", "first_name", "last_name", "occasional", "active", "job_title", "email", "work_phone_number", "mobile_phone_number",
			"department_ids", "can_see_all_tickets_from_associated_departments", "reporting_manager_id", "address", "time_zone",
			"time_format", "language", "location_id", "background_information", "scoreboard_level_id", "member_of", "observer_of",
			"member_of_pending_approval", "observer_of_pending_approval", "roles", "last_login_at", "custom_fields", "has_logged_in",
			"workspace_ids", "created_at", "updated_at"}},
		{"requester #view_a_requester", fmt.Sprintf("/requesters/%d", num(requesters[0].(map[string]any)["id"])), "requester", []string{
			"id", "is_agent", "first_name", "last_name", "job_title", "primary_email", "secondary_emails", "work_phone_number",
			"mobile_phone_number", "department_ids", "can_see_all_tickets_from_associated_departments", "reporting_manager_id",
			"address", "time_zone", "time_format", "language", "location_id", "background_information", "custom_fields", "active",
			"has_logged_in", "created_at", "updated_at"}},
		{"group #view_a_group", fmt.Sprintf("/groups/%d", num(groups[0].(map[string]any)["id"])), "group", []string{
			"id", "name", "description", "escalate_to", "unassigned_for", "business_hours_id", "created_at", "updated_at",
			"auto_ticket_assign", "restricted", "approval_required", "workspace_id", "members", "observers", "leaders",
			"members_pending_approval", "observers_pending_approval", "leaders_pending_approval"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := get(t, s, tt.path).want(t, 200).obj(tt.key)
			for _, f := range tt.fields {
				if _, ok := obj[f]; !ok {
					t.Errorf("%s has no %q", tt.key, f)
				}
			}
		})
	}
	t.Run("conversation #list_all_conversations", func(t *testing.T) {
		convs := get(t, s, fmt.Sprintf("/tickets/%d/conversations", tid)).want(t, 200).list("conversations")
		if len(convs) == 0 {
			t.Fatal("no conversations")
		}
		c := convs[len(convs)-1].(map[string]any)
		for _, f := range []string{"id", "ticket_id", "user_id", "body", "body_text", "incoming", "private", "source", "support_email",
			"from_email", "to_emails", "cc_emails", "bcc_emails", "attachments", "created_at", "updated_at"} {
			if _, ok := c[f]; !ok {
				t.Errorf("conversation has no %q", f)
			}
		}
	})
}
