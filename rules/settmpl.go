package rules

import (
	"strings"

	"github.com/expr-lang/expr/vm"

	"github.com/deskbot/deskbot/sdclient"
)

// setTemplate is a value of set: written as a template, such as
// set: {category: "{{ ticket.custom_fields.site }}"}.
type setTemplate struct {
	field string // type, category, sub_category, tags or custom_fields
	key   string // the custom field's name
	index int    // the tag's index in the set's tags
	tmpl  *template
}

// renderSetTemplates writes the rendered values of ts into u, a copy of the
// action's update. A tag that renders empty (or only blanks) is dropped.
func renderSetTemplates(m *vm.VM, env any, ts []setTemplate, u *sdclient.TicketUpdate) error {
	if len(ts) == 0 {
		return nil
	}
	var dropTags []int
	for _, st := range ts {
		v, err := st.tmpl.render(m, env)
		if err != nil {
			return err
		}
		switch st.field {
		case "type":
			u.Type = sdclient.Ptr(v)
		case "category":
			u.Category = sdclient.Ptr(v)
		case "sub_category":
			u.SubCategory = sdclient.Ptr(v)
		case "custom_fields":
			u.CustomFields[st.key] = v
		case "tags":
			if strings.TrimSpace(v) == "" {
				dropTags = append(dropTags, st.index)
				continue
			}
			(*u.Tags)[st.index] = v
		}
	}
	if len(dropTags) > 0 {
		kept := (*u.Tags)[:0]
		for i, tag := range *u.Tags {
			drop := false
			for _, d := range dropTags {
				drop = drop || d == i
			}
			if !drop {
				kept = append(kept, tag)
			}
		}
		*u.Tags = kept
	}
	return nil
}
