package sdsim

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The read-only collections: solutions, products, vendors, canned
// responses, and the ticket form fields (built from the desk's state).

type catalog struct {
	categories []solutionCategory
	folders    []solutionFolder
	articles   []solutionArticle
	products   []product
	vendors    []vendor
	canned     []cannedResponse
}

func newCatalog(now time.Time) catalog {
	t := now.Add(-180 * 24 * time.Hour)
	ws := DefaultWorkspaceID
	var c catalog
	cats := []struct {
		name    string
		folders map[string][]string
	}{
		{"General IT", map[string][]string{
			"Getting started": {"How to raise a ticket", "What the ticket statuses mean", "Service desk opening hours"},
			"Accounts":        {"Reset your password", "Set up multi-factor authentication", "Request access to a shared mailbox"},
		}},
		{"Network", map[string][]string{
			"VPN":   {"Connect to the VPN from home", "VPN disconnects every few minutes"},
			"Wi-Fi": {"Join the office Wi-Fi", "Guest Wi-Fi for visitors"},
		}},
		{"Hardware", map[string][]string{
			"Laptops":  {"Request a replacement laptop", "Laptop will not charge"},
			"Printers": {"Add a network printer", "Printer shows offline"},
		}},
	}
	var catID, folderID, articleID int64 = 21000500001, 21000510001, 21000520001
	for ci, cat := range cats {
		c.categories = append(c.categories, solutionCategory{ID: catID, Name: cat.name, Description: cat.name + " articles",
			Position: ci + 1, DefaultCategory: ci == 0, VisibleInPortals: []int64{1}, WorkspaceID: ws, CreatedAt: t, UpdatedAt: t})
		pos := 0
		for _, fname := range slices.Sorted(maps.Keys(cat.folders)) {
			pos++
			c.folders = append(c.folders, solutionFolder{ID: folderID, Name: fname, Description: fname, CategoryID: catID,
				Position: pos, DefaultFolder: pos == 1, Visibility: 1, WorkspaceID: ws, CreatedAt: t, UpdatedAt: t})
			for i, title := range cat.folders[fname] {
				desc := "<p>" + title + ": step-by-step instructions.</p>"
				c.articles = append(c.articles, solutionArticle{ID: articleID, Title: title,
					Description: desc, DescriptionText: stripTags(desc), Position: i + 1, Attachments: []any{}, FolderID: folderID, CategoryID: catID,
					Status: 2, ArticleType: 1, Tags: []string{}, Keywords: []string{}, Views: 10 * (i + 1), ThumbsUp: i,
					AgentID: DefaultAgentID, WorkspaceID: ws, CreatedAt: t, UpdatedAt: t})
				articleID++
			}
			folderID++
		}
		catID++
	}
	for i, p := range [][2]string{{"MacBook Pro 14", "Apple"}, {"ThinkPad X1 Carbon", "Lenovo"}, {"Dell U2723QE Monitor", "Dell"}, {"Cisco Meraki MR46", "Cisco"}} {
		c.products = append(c.products, product{ID: 21000600001 + int64(i), Name: p[0], AssetTypeID: 21000000100 + int64(i), Manufacturer: p[1],
			Status: "In Production", ModeOfProcurement: "Buy", Description: p[0], DescriptionText: p[0], CreatedAt: t, UpdatedAt: t})
	}
	// Vendors carry the fields of the docs' examples (#view_a_vendor): no
	// e-mail or phone, an address of five keys.
	for i, v := range []string{"Apple", "Lenovo", "Dell", "Cisco"} {
		c.vendors = append(c.vendors, vendor{ID: 21000700001 + int64(i), Name: v, Description: v + " (hardware vendor)",
			Address:      map[string]any{"line1": nil, "city": nil, "state": nil, "country": nil, "zipcode": nil},
			CustomFields: map[string]any{}, CreatedAt: t, UpdatedAt: t})
	}
	for i, cr := range [][2]string{
		{"Password reset done", "Your password has been reset. You will be asked to choose a new one at next login."},
		{"Need more information", "Could you send a screenshot of the error and the time it happened?"},
		{"Resolved - please confirm", "We believe this is fixed. Please reply if the problem comes back."},
		{"Hardware on order", "A replacement has been ordered; we will update this ticket when it arrives."},
	} {
		c.canned = append(c.canned, cannedResponse{ID: 21000800001 + int64(i), Title: cr[0], FolderID: 21000810001,
			Content: cr[1], ContentHTML: "<div>" + cr[1] + "</div>", Attachments: []any{}, WorkspaceID: ws, CreatedAt: t, UpdatedAt: t})
	}
	return c
}

func listCategories(c *call) reply { return listPage(c, "categories", c.st.catalog.categories) }

// listFolders: GET /solutions/folders?category_id= (required).
func listFolders(c *call) reply {
	cat := c.st.catalog
	return listUnder(c, "category_id", "solution category", cat.categories, func(x solutionCategory) int64 { return x.ID },
		"folders", cat.folders, func(f solutionFolder) int64 { return f.CategoryID })
}

// listArticles: GET /solutions/articles?folder_id= (required).
func listArticles(c *call) reply {
	cat := c.st.catalog
	return listUnder(c, "folder_id", "solution folder", cat.folders, func(f solutionFolder) int64 { return f.ID },
		"articles", cat.articles, func(a solutionArticle) int64 { return a.FolderID })
}

// listUnder lists, under key, the children of the parent that the
// required query parameter param names (what it is, for a 404).
func listUnder[P, C any](c *call, param, what string, parents []P, id func(P) int64, key string, children []C, parentOf func(C) int64) reply {
	s := c.q.Get(param)
	if s == "" {
		return invalid(required(param))
	}
	pid, _ := strconv.ParseInt(s, 10, 64)
	if !slices.ContainsFunc(parents, func(p P) bool { return id(p) == pid }) {
		return notFound(what + " " + s)
	}
	out := []C{}
	for _, ch := range children {
		if parentOf(ch) == pid {
			out = append(out, ch)
		}
	}
	return listPage(c, key, out)
}

func listProducts(c *call) reply { return listPage(c, "products", c.st.catalog.products) }

// listWorkspaces: GET /workspaces, envelope "workspaces".
func listWorkspaces(c *call) reply {
	ws := make([]Workspace, 0, len(c.st.workspaces))
	for _, w := range c.st.workspaces {
		ws = append(ws, *w)
	}
	return listPage(c, "workspaces", ws)
}

func listVendors(c *call) reply         { return listPage(c, "vendors", c.st.catalog.vendors) }
func listCannedResponses(c *call) reply { return listPage(c, "canned_responses", c.st.catalog.canned) }

// listFormFields: GET /ticket_form_fields and GET /ticket_fields, envelope
// "ticket_fields". The status field's choices hold every status, custom
// ones included.
func listFormFields(c *call) reply {
	st := c.st
	t := c.st.catalog.categories[0].CreatedAt
	var out []formField
	add := func(name, label, typ string, choices []choice) {
		out = append(out, formField{ID: 21000900001 + int64(len(out)), Name: name, Label: label, FieldType: typ,
			Position: len(out) + 1, DefaultField: strings.HasPrefix(typ, "default"), RequiredForAgents: name == "requester" || name == "subject",
			CustomersCanEdit: name == "subject" || name == "description", LabelForCustomers: label, DisplayedToCustomers: true,
			Choices: nonNil(choices), NestedFields: []any{}, Sections: []any{}, CreatedAt: t, UpdatedAt: t})
	}
	add("requester", "Requester", "default_requester", nil)
	add("subject", "Subject", "default_subject", nil)
	add("source", "Source", "default_source", []choice{{ID: 1, Value: "Email"}, {ID: 2, Value: "Portal"}, {ID: 3, Value: "Phone"},
		{ID: 4, Value: "Chat"}, {ID: 5, Value: "Feedback widget"}, {ID: 9, Value: "Walkup"}, {ID: 10, Value: "Slack"}})
	var types []choice
	for i, ty := range ticketTypes {
		types = append(types, choice{ID: int64(i + 1), Value: ty})
	}
	add("ticket_type", "Type", "default_ticket_type", types)
	var statuses []choice
	for _, s := range st.statuses {
		statuses = append(statuses, choice{ID: int64(s.ID), Value: s.Name, RequesterDisplayValue: s.CustomerLabel})
	}
	add("status", "Status", "default_status", statuses)
	add("urgency", "Urgency", "default_urgency", []choice{{ID: 1, Value: "Low"}, {ID: 2, Value: "Medium"}, {ID: 3, Value: "High"}})
	add("impact", "Impact", "default_impact", []choice{{ID: 1, Value: "Low"}, {ID: 2, Value: "Medium"}, {ID: 3, Value: "High"}})
	add("priority", "Priority", "default_priority", []choice{{ID: 1, Value: "Low"}, {ID: 2, Value: "Medium"}, {ID: 3, Value: "High"}, {ID: 4, Value: "Urgent"}})
	var groups, agents, depts []choice
	for _, g := range st.groups.all() {
		groups = append(groups, choice{ID: g.ID, Value: g.Name})
	}
	for _, a := range st.agents.all() {
		agents = append(agents, choice{ID: a.ID, Value: a.Name()})
	}
	for _, d := range st.departments.all() {
		depts = append(depts, choice{ID: d.ID, Value: d.Name})
	}
	add("group", "Group", "default_group", groups)
	add("agent", "Agent", "default_agent", agents)
	add("department", "Department", "default_department", depts)
	add("category", "Category", "default_category", []choice{{ID: 1, Value: "Hardware"}, {ID: 2, Value: "Software"}, {ID: 3, Value: "Network"}, {ID: 4, Value: "Access"}})
	add("description", "Description", "default_description", nil)
	for _, f := range st.customFields {
		typ := map[FieldKind]string{FieldString: "custom_text", FieldNumber: "custom_number", FieldBool: "custom_checkbox", FieldDate: "custom_date"}[f.Kind]
		var ch []choice
		if len(f.Choices) > 0 {
			typ = "custom_dropdown"
			for i, v := range f.Choices {
				ch = append(ch, choice{ID: int64(i + 1), Value: v, DisplayID: int64(i + 1)})
			}
		}
		label := f.Label
		if label == "" {
			label = f.Name
		}
		add(f.Name, label, typ, ch)
	}
	return success(map[string]any{"ticket_fields": out})
}
