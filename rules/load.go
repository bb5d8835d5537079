package rules

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/oncall"
	"github.com/deskbot/deskbot/sdclient"
	"github.com/deskbot/deskbot/sdclient/filter"
)

// Error is one problem of a rules file, positioned in the file.
type Error struct {
	File string
	Line int // 1-based
	Col  int // 1-based
	Rule string
	Msg  string
}

// Error formats the problem as FILE:LINE:COL: rule "NAME": message (without
// the rule part for problems outside a rule).
func (e Error) Error() string {
	if e.Rule != "" {
		return fmt.Sprintf("%s:%d:%d: rule %q: %s", e.File, e.Line, e.Col, e.Rule, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// LoadError lists every problem of a rules file, in file order.
type LoadError struct {
	Errors []Error
}

// Error returns one line per problem.
func (e *LoadError) Error() string {
	lines := make([]string, len(e.Errors))
	for i, x := range e.Errors {
		lines[i] = x.Error()
	}
	return strings.Join(lines, "\n")
}

var (
	ruleNameRE  = regexp.MustCompile(`^[a-z0-9-]+$`)
	channelIDRE = regexp.MustCompile(`^[CGD][A-Z0-9]{4,}$`)
	yamlLineRE  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

// yamlParserProblems are the problems of libyaml's parser (as opposed to
// its scanner); yaml.v3 prints their line 0-based.
var yamlParserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

var lineBreaks = strings.NewReplacer("\r\n", `\r\n`, "\n", `\n`, "\r", `\r`, "\u0085", `\u0085`, "\u2028", `\u2028`, "\u2029", `\u2029`)

// anchorKeys, last in a list of allowed keys, also allows every key
// starting with x-: the top level's keys that hold anchors to merge (as in
// docker compose files); the loader does not read them otherwise.
const anchorKeys = "x-*"

var (
	topKeys   = []string{"version", "channels", "oncall", "rules", anchorKeys}
	ruleKeys  = []string{"name", "query", "if", "every", "cron", "once", "group_over", "max_firings_per_cycle", "actions"}
	alertKeys = []string{"channel", "text", "mention"}
	pageKeys  = []string{"policy", "channel", "text"}
	setKeys   = []string{"status", "priority", "group_id", "responder_id", "tags", "type", "category", "sub_category", "custom_fields"}
	actKeys   = []string{"note", "reply", "set", "assign", "alert", "page"}
)

// Load parses and checks a rules file. filename is used in messages only.
// On any problem it returns a *LoadError listing all of them.
func Load(filename string, data []byte, opts ...Option) (*Set, error) {
	var cfg loadConfig
	for _, o := range opts {
		o(&cfg)
	}
	l := &loader{file: filename, cfg: cfg, lines: splitLines(string(data))}
	s := l.load(data)
	if len(l.errs) > 0 {
		sort.SliceStable(l.errs, func(i, j int) bool {
			a, b := l.errs[i], l.errs[j]
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Col < b.Col
		})
		return nil, &LoadError{Errors: l.errs}
	}
	s.needsPeople = usesPeople(s.rules)
	return s, nil
}

// splitLines splits src at YAML's line breaks: \r\n, \r, \n, and the
// Unicode NEL, LS and PS, so that lines count as the parser counts them.
func splitLines(src string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(src); {
		n := 0
		switch {
		case src[i] == '\n':
			n = 1
		case src[i] == '\r':
			n = 1
			if i+1 < len(src) && src[i+1] == '\n' {
				n = 2
			}
		case strings.HasPrefix(src[i:], "\u0085"), strings.HasPrefix(src[i:], "\u2028"), strings.HasPrefix(src[i:], "\u2029"):
			_, n = utf8.DecodeRuneInString(src[i:])
		}
		if n == 0 {
			i++
			continue
		}
		lines = append(lines, src[start:i])
		i += n
		start = i
	}
	return append(lines, src[start:])
}

type loader struct {
	file  string
	cfg   loadConfig
	lines []string
	errs  []Error
	rule  string // name of the rule being loaded, for messages
	// blockIndent holds, for each block scalar, the indentation of the
	// collection it is written in (-1 at the top level): with an
	// indentation indicator (|2) the text is indented that much more.
	blockIndent map[*yaml.Node]int
	chans       map[string]string
	// oncall is the parsed oncall: section (nil when absent or broken);
	// oncallBad is set when it had errors, so that page actions naming
	// one of its policies are not reported a second time.
	oncall    *oncall.Config
	oncallBad bool
}

func (l *loader) errAt(line, col int, format string, args ...any) {
	if line < 1 {
		line = 1
	}
	if col < 1 {
		col = 1
	}
	// One problem, one line: quote any line break a message picked up.
	msg := lineBreaks.Replace(fmt.Sprintf(format, args...))
	l.errs = append(l.errs, Error{File: l.file, Line: line, Col: col, Rule: l.rule, Msg: msg})
}

func (l *loader) errNode(n *yaml.Node, format string, args ...any) {
	l.errAt(n.Line, n.Column, format, args...)
}

func (l *loader) load(data []byte) (set *Set) {
	var doc yaml.Node
	if err := safeUnmarshal(data, &doc); err != nil {
		if l.syntaxHints(data) {
			return nil
		}
		line, msg := 1, err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
			if yamlParserProblems[msg] {
				// yaml.v3 reports a parser (not scanner) error's line 0-based.
				line++
			}
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		l.errAt(line, 1, "invalid YAML: %s", msg)
		return nil
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		l.errAt(1, 1, "empty rules file: want a mapping starting with version: 1")
		return nil
	}
	root := resolve(doc.Content[0])
	l.blockIndent = l.blockParentIndents(&doc)
	// Merge keys are expanded before anything is read: first those outside
	// the rules (the top level, channels:, oncall:, x- keys holding
	// anchors), then each rule's as it is loaded, so that problems with a
	// merge name the rule; whatever is left (never read) last.
	mg := newMerger()
	defer func() {
		mg.walk(&doc)
		l.mergeErrs(mg.take())
	}()
	if root.Kind == yaml.MappingNode {
		mg.mapping(root)
		for i := 0; i+1 < len(root.Content); i += 2 {
			if k := resolve(root.Content[i]); k.Kind == yaml.ScalarNode && k.Value == "rules" {
				continue
			}
			mg.walk(root.Content[i])
			mg.walk(root.Content[i+1])
		}
		l.mergeErrs(mg.take())
	}
	pairs, ok := l.mapping(root, "the rules file", topKeys)
	if !ok {
		return nil
	}
	s := &Set{file: l.file, channels: map[string]string{}, byName: map[string]*Rule{}}
	l.chans = s.channels
	var version, channels, onc, rules *yaml.Node
	for _, p := range pairs {
		switch p.key.Value {
		case "version":
			version = p.val
		case "channels":
			channels = p.val
		case "oncall":
			onc = p.val
		case "rules":
			rules = p.val
		}
	}
	if version == nil {
		l.errNode(root, "missing version: 1")
	} else if n, ok := l.intValue(version, "version"); ok && n != 1 {
		l.errNode(version, "unsupported version %d: this deskbot reads version 1", n)
	}
	if channels != nil && !(channels.Kind == yaml.ScalarNode && channels.Tag == "!!null") {
		l.channels(channels, s)
	}
	if onc != nil {
		// Loaded before the rules, wherever it is in the file, so that page
		// actions can be checked against its policies.
		l.loadOnCall(onc, s)
	}
	if rules == nil {
		l.errNode(root, "missing rules: (a list of rules)")
		return s
	}
	if rules.Kind == yaml.ScalarNode && rules.Tag == "!!null" {
		return s // rules: with nothing under it: a valid, empty file
	}
	if rules.Kind != yaml.SequenceNode {
		l.errNode(rules, "rules: want a list of rules, got %s", describe(rules))
		return s
	}
	firstAt := map[string]*yaml.Node{}
	for _, item := range rules.Content {
		mg.walk(item)
		merrs := mg.take()
		if item.Kind == yaml.AliasNode && resolve(item).Kind == yaml.MappingNode {
			// A whole rule repeated by an alias has the same name as the
			// original: say so where the alias is, not at the original.
			l.errNode(item, "rule: *%s repeats the rule of line %d, and rule names must be unique: copy the rule and rename it", item.Value, resolve(item).Line)
			continue
		}
		r := l.loadRule(resolve(item), firstAt, merrs)
		if r != nil {
			r.plan, r.set = s.terms.plan(r.local), s
			s.rules = append(s.rules, r)
			s.byName[r.Name] = r
		}
	}
	return s
}

// loadOnCall parses the oncall: section and merges its positioned errors.
func (l *loader) loadOnCall(n *yaml.Node, s *Set) {
	cfg, errs := oncall.ParseConfig(l.file, n)
	for _, e := range errs {
		l.errAt(e.Line, e.Col, "%s", e.Msg)
	}
	if len(errs) > 0 {
		l.oncallBad = true
		return
	}
	if len(cfg.Schedules) == 0 && len(cfg.Policies) == 0 {
		return // oncall: with nothing under it
	}
	l.oncall, s.oncall = cfg, cfg
}

// safeUnmarshal shields Load from a panic in the YAML parser on hostile input.
func safeUnmarshal(data []byte, doc *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return yaml.Unmarshal(data, doc)
}

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

type pair struct{ key, val *yaml.Node }

// mapping checks that n is a mapping whose keys are distinct strings among
// allowed, and returns its pairs. what names n in messages.
func (l *loader) mapping(n *yaml.Node, what string, allowed []string) ([]pair, bool) {
	if n.Kind != yaml.MappingNode {
		l.errNode(n, "%s: want a mapping, got %s", what, describe(n))
		return nil, false
	}
	seen := map[string]int{}
	var out []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			l.errNode(k, "%s: want a plain key, got %s", what, describe(k))
			continue
		}
		if line, dup := seen[k.Value]; dup {
			l.errNode(k, "duplicate key %q (first at line %d)", k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		if allowed != nil && !allowedKey(allowed, k.Value) {
			want := strings.Join(allowed, ", ")
			if last := len(allowed) - 1; allowed[last] == anchorKeys {
				want = strings.Join(allowed[:last], ", ") + ", or x-NAME to hold anchors"
			}
			l.errNode(k, "unknown key %q in %s (want one of %s)%s", k.Value, what, want, keyHint(what, k.Value))
			continue
		}
		out = append(out, pair{k, v})
	}
	return out, true
}

// allowedKey reports whether key k is among allowed, where the entry
// anchorKeys allows any key starting with x-.
func allowedKey(allowed []string, k string) bool {
	if slices.Contains(allowed, anchorKeys) && len(k) > 2 && strings.HasPrefix(k, "x-") {
		return true
	}
	return slices.Contains(allowed, k)
}

// describe names the YAML type of a node for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing"
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int":
			return "the number " + n.Value
		case "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		}
		return fmt.Sprintf("a value tagged %q", n.Tag)
	}
	return "an alias"
}

// str returns the value of a string scalar.
func (l *loader) str(n *yaml.Node, what string) (string, bool) {
	if isUnquotedTemplate(n) {
		l.errNode(n, "%s: %s", what, l.templateHint(n))
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		l.errNode(n, "%s: want a string, got %s", what, describe(n))
		return "", false
	}
	return n.Value, true
}

// intValue returns the value of an integer scalar.
func (l *loader) intValue(n *yaml.Node, what string) (int64, bool) {
	var v int64
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		l.errNode(n, "%s: want an integer, got %s", what, describe(n))
		return 0, false
	}
	return v, true
}

func (l *loader) channels(n *yaml.Node, s *Set) {
	pairs, ok := l.mapping(n, "channels", nil)
	if !ok {
		return
	}
	for _, p := range pairs {
		v, ok := l.str(p.val, fmt.Sprintf("channel %q", p.key.Value))
		if !ok {
			continue
		}
		if !isChannelLiteral(v) {
			l.errNode(p.val, "channel %q: want \"#name\" or a channel id such as C0123ABCD, got %q", p.key.Value, v)
			continue
		}
		s.channels[p.key.Value] = v
	}
}

// isChannelLiteral reports whether v names a channel by itself: #name or a
// Slack channel id.
func isChannelLiteral(v string) bool {
	if strings.HasPrefix(v, "#") {
		return len(v) > 1 && !strings.ContainsAny(v, " \t\n")
	}
	return channelIDRE.MatchString(v)
}

// mergeErrs reports problems of merge keys, naming the rule being loaded.
func (l *loader) mergeErrs(errs []mergeErr) {
	for _, e := range errs {
		l.errNode(e.n, "%s", e.msg)
	}
}

// loadRule loads rule n; firstAt holds the name node of every rule loaded
// so far, merrs the problems of the rule's merge keys.
func (l *loader) loadRule(n *yaml.Node, firstAt map[string]*yaml.Node, merrs []mergeErr) *Rule {
	l.rule = ""
	defer func() { l.rule = "" }()
	if n.Kind != yaml.MappingNode {
		l.mergeErrs(merrs)
		l.errNode(n, "rule: want a mapping with name, query and actions, got %s", describe(n))
		return nil
	}
	// Find the name first so every other message can carry it.
	r := &Rule{Line: n.Line, Every: DefaultEvery, GroupOver: DefaultGroupOver, MaxFiringsPerCycle: DefaultMaxFiringsPerCycle}
	nameOK := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value != "name" {
			continue
		}
		name, ok := l.str(v, "name")
		if !ok {
			break
		}
		if ruleNameRE.MatchString(name) {
			l.rule = name
		}
		switch {
		case !ruleNameRE.MatchString(name):
			l.errNode(v, "name %q: want lower-case letters, digits and '-' only", name)
		case firstAt[name] == v:
			// The name itself came with a merge key (<<: *other-rule).
			l.errNode(n, "duplicate rule name %q: the rule merges the name: of line %d; give it a name of its own", name, v.Line)
		case firstAt[name] != nil:
			l.errNode(v, "duplicate rule name %q (first defined at line %d)", name, firstAt[name].Line)
		default:
			firstAt[name] = v
			nameOK = true
		}
		r.Name = name
		break
	}
	l.mergeErrs(merrs)
	pairs, _ := l.mapping(n, "rule", ruleKeys)
	byKey := map[string]pair{}
	for _, p := range pairs {
		byKey[p.key.Value] = p
	}
	if _, ok := byKey["name"]; !ok {
		l.errNode(n, "rule without a name")
	}
	ok := nameOK
	if p, has := byKey["query"]; has {
		ok = l.loadQuery(p.val, r) && ok
	} else {
		l.errNode(n, "missing query: (a filter expression such as status:open AND priority:4)")
		ok = false
	}
	if p, has := byKey["if"]; has {
		ok = l.loadIf(p.val, r) && ok
	}
	every, hasEvery := byKey["every"]
	cronP, hasCron := byKey["cron"]
	if hasEvery {
		ok = l.loadEvery(every.val, r) && ok
	}
	if hasCron {
		if hasEvery {
			l.errNode(cronP.key, "every and cron are mutually exclusive: use one")
			ok = false
		} else {
			ok = l.loadCron(cronP.val, r) && ok
		}
	}
	if p, has := byKey["once"]; has {
		ok = l.loadOnce(p.val, r) && ok
	}
	if p, has := byKey["group_over"]; has {
		ok = l.positive(p.val, "group_over", "alerts of more tickets than this in one poll are posted as one message", &r.GroupOver) && ok
	}
	if p, has := byKey["max_firings_per_cycle"]; has {
		ok = l.positive(p.val, "max_firings_per_cycle", "the rule fires on at most this many tickets a poll; the rest wait for later polls", &r.MaxFiringsPerCycle) && ok
	}
	if p, has := byKey["actions"]; has {
		ok = l.loadActions(p.val, r) && ok
	} else {
		l.errNode(n, "missing actions: (a list of note, reply, set, assign, alert or page)")
		ok = false
	}
	if !ok || len(pairs)*2 != len(n.Content) {
		return nil
	}
	return r
}

func (l *loader) loadQuery(n *yaml.Node, r *Rule) bool {
	src, ok := l.str(n, "query")
	if !ok {
		return false
	}
	if strings.TrimSpace(src) == "" {
		l.errNode(n, "query: empty filter expression")
		return false
	}
	e, err := filter.Parse(src)
	if err != nil {
		var se *filter.SyntaxError
		if errors.As(err, &se) {
			l.errIn(n, byteToRune(src, se.Pos), "query: %s", se.Msg)
		} else {
			l.errNode(n, "query: %v", err)
		}
		return false
	}
	ok = true
	for _, t := range filter.Terms(e) {
		if isStatusOpen(t) && t.Op != filter.OpEq {
			l.errIn(n, byteToRune(src, t.Pos), "query: status%sopen: the status:open macro takes no comparison", t.Op)
			ok = false
		}
	}
	// status:open is a deskbot macro; check the rest against the desk's schema.
	probe := filter.Rewrite(e, func(t *filter.Term) (filter.Expr, bool) {
		if isStatusOpen(t) {
			return &filter.Term{Field: "status", Op: filter.OpEq, Value: filter.Number(sdclient.StatusOpen), Pos: t.Pos}, true
		}
		return nil, false
	})
	if err := filter.TicketSchema(l.cfg.custom).Validate(probe); err != nil {
		for _, e := range unjoin(err) {
			var fe *filter.FieldError
			if errors.As(e, &fe) {
				l.errIn(n, byteToRune(src, fe.Pos), "query: %s", l.queryHint(probe, fe))
			} else {
				l.errNode(n, "query: %v", e)
			}
		}
		return false
	}
	if !ok {
		return false
	}
	r.Query = src
	r.query = e
	r.local = localQuery(e)
	return true
}

// queryHint returns the message of a query's field error, with what to
// write instead where the filter language's own message cannot know it:
// a status or priority by name, or a custom field the loader was not told
// about (see WithCustomFields).
func (l *loader) queryHint(q filter.Expr, fe *filter.FieldError) string {
	if fe.Field == "responder_id" && strings.HasPrefix(fe.Msg, "unknown field ") {
		return `unknown field "responder_id": in queries the assigned agent is agent_id (agent_id:0 or agent_id:null when unassigned); responder_id is its name in expressions (ticket.responder_id) and in set: {responder_id: ID}`
	}
	if strings.HasPrefix(fe.Msg, "unknown field ") && !strings.Contains(fe.Msg, "did you mean") && len(l.cfg.custom) == 0 {
		return fe.Msg + " (a custom field? deskbot reads them from the desk; rules check and test need --custom-field " +
			fe.Field + ":KIND; or test it in if: with ticket.custom_fields." + fe.Field + ")"
	}
	if fe.Field != "status" && fe.Field != "priority" {
		return fe.Msg
	}
	for _, t := range filter.Terms(q) {
		if t.Pos != fe.Pos || t.Value.Kind != filter.KindWord {
			continue
		}
		for name, code := range namedCodes {
			isStatus := name == "Open" || name == "Pending" || name == "Resolved" || name == "Closed"
			if strings.EqualFold(name, t.Value.Str) && isStatus == (fe.Field == "status") {
				return fmt.Sprintf("%s:%s: write %s:%d (%s); of the names only status:open is understood, as every open status", fe.Field, t.Value.Str, fe.Field, code, name)
			}
		}
	}
	return fe.Msg
}

// unjoin splits an errors.Join error into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func byteToRune(s string, pos int) int {
	if pos > len(s) {
		pos = len(s)
	}
	if pos < 0 {
		pos = 0
	}
	return utf8.RuneCountInString(s[:pos])
}

func (l *loader) loadIf(n *yaml.Node, r *Rule) bool {
	src, ok := l.str(n, "if")
	if !ok {
		return false
	}
	if strings.TrimSpace(src) == "" {
		l.errNode(n, "if: empty expression")
		return false
	}
	c, errs := compileExpr(src, true)
	for _, e := range errs {
		l.errIn(n, e.Off, "if: %s", e.Msg)
	}
	if c == nil {
		return false
	}
	c.at = l.at(n, 0)
	r.If = src
	r.cond = c
	return true
}

// at returns the function that positions a run-time error of an
// expression starting at rune offset base of scalar n.
func (l *loader) at(n *yaml.Node, base int) func(off int) string {
	return func(off int) string {
		line, col := l.posIn(n, base+off)
		return fmt.Sprintf("%s:%d:%d", l.file, line, col)
	}
}

// duration parses a duration scalar (a string such as 90s, 15m, 2h30m).
func (l *loader) duration(n *yaml.Node, what string) (time.Duration, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!int") {
		l.errNode(n, "%s: want a duration such as 30s, 5m or 1h, got %s", what, describe(n))
		return 0, false
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		l.errNode(n, "%s: invalid duration %q: want e.g. 30s, 5m or 1h", what, n.Value)
		return 0, false
	}
	return d, true
}

func (l *loader) loadEvery(n *yaml.Node, r *Rule) bool {
	d, ok := l.duration(n, "every")
	if !ok {
		return false
	}
	if d < time.Second {
		l.errNode(n, "every: %s is too short: want at least 1s", n.Value)
		return false
	}
	r.Every = d
	return true
}

func (l *loader) loadCron(n *yaml.Node, r *Rule) bool {
	spec, ok := l.str(n, "cron")
	if !ok {
		return false
	}
	if _, err := cron.ParseStandard(spec); err != nil {
		l.errNode(n, "cron: invalid spec %q: %v (want 5 fields: minute hour day-of-month month day-of-week)", spec, err)
		return false
	}
	r.Cron = spec
	r.Every = 0
	return true
}

// positive reads a whole number of at least 1 into dst; meaning says
// what the setting does, for the error.
func (l *loader) positive(n *yaml.Node, what, meaning string, dst *int) bool {
	v, ok := l.intValue(n, what)
	if !ok {
		return false
	}
	if v < 1 || v > maxCount {
		l.errNode(n, "%s: %d: want a whole number from 1 to %d (%s)", what, v, maxCount, meaning)
		return false
	}
	*dst = int(v)
	return true
}

// maxCount bounds group_over and max_firings_per_cycle.
const maxCount = 100000

func (l *loader) loadOnce(n *yaml.Node, r *Rule) bool {
	const want = "want episode, ticket or every <duration> (e.g. every 4h)"
	s, ok := l.str(n, "once")
	if !ok {
		return false
	}
	switch f := strings.Fields(s); {
	case len(f) == 1 && f[0] == "episode":
		r.Once = Once{Mode: OnceEpisode}
	case len(f) == 1 && f[0] == "ticket":
		r.Once = Once{Mode: OnceTicket}
	case len(f) == 2 && f[0] == "every":
		d, err := time.ParseDuration(f[1])
		if err != nil {
			l.errNode(n, "once: invalid duration %q: %s", f[1], want)
			return false
		}
		if d < time.Second {
			l.errNode(n, "once: every %s is too short: want at least 1s", f[1])
			return false
		}
		r.Once = Once{Mode: OnceEvery, Period: d}
	default:
		l.errNode(n, "once: %q: %s", s, want)
		return false
	}
	return true
}

// errIn reports a problem at rune offset off inside the text of scalar n.
func (l *loader) errIn(n *yaml.Node, off int, format string, args ...any) {
	line, col := l.posIn(n, off)
	l.errAt(line, col, format, args...)
}

// posIn maps a rune offset in the value of scalar n to its line and column
// in the file. It walks the scalar's source as the YAML scanner reads it:
// block scalars (| and >) start on the line after their indicator, a quoted
// scalar's text after its quote; escapes (\" \t \u00e9, or a doubled quote in single
// quotes) are several source characters for one of the value; a line break
// folded into a space, blank lines folded into line feeds, the indentation
// and trailing blanks of continued lines, and an escaped line break are
// followed back to the source.
func (l *loader) posIn(n *yaml.Node, off int) (int, int) {
	if off < 0 {
		off = 0
	}
	lineAt := func(i int) []rune {
		if i < 1 || i > len(l.lines) {
			return nil
		}
		return []rune(l.lines[i-1])
	}
	blankFrom := func(r []rune, i int) bool {
		for ; i < len(r); i++ {
			if r[i] != ' ' && r[i] != '\t' {
				return false
			}
		}
		return true
	}
	indent := func(r []rune) int {
		i := 0
		for i < len(r) && (r[i] == ' ' || r[i] == '\t') {
			i++
		}
		return i
	}
	block := n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
	double := n.Style&yaml.DoubleQuotedStyle != 0
	single := n.Style&yaml.SingleQuotedStyle != 0
	line, start := n.Line, n.Column-1 // start: 0-based rune column of the text
	bindent := 0                      // a block scalar's indentation
	if block {
		// Every line of a block scalar shares one indentation: the
		// enclosing collection's plus the header's indentation indicator
		// (|2), or else that of its first non-blank line; more indentation
		// is part of the text.
		header, indicator := l.blockHeader(n)
		line = header + 1
		if parent, known := l.blockIndent[n]; indicator > 0 && known {
			bindent = max(parent, 0) + indicator
		} else {
			for i := line; i <= len(l.lines); i++ {
				if r := lineAt(i); !blankFrom(r, 0) {
					bindent = indent(r)
					break
				}
			}
		}
		start = bindent
	} else if double || single {
		start++
	}
	v := 0 // value offset reached
	for guard := 0; guard <= len(l.lines); guard++ {
		r := lineAt(line)
		if r == nil {
			break
		}
		// The text of this line: up to the closing quote, or the end of the
		// line less (outside block scalars) its trailing blanks.
		end, last, escapedBreak := len(r), false, false
		if !block {
			for end > start && (r[end-1] == ' ' || r[end-1] == '\t') {
				end--
			}
		}
		for i := start; i < end; {
			w := 1
			switch {
			case double && r[i] == '"', single && r[i] == '\'' && (i+1 >= len(r) || r[i+1] != '\''):
				last = true
			case double && r[i] == '\\' && i+1 >= end:
				escapedBreak = true
			case double && r[i] == '\\':
				switch r[i+1] {
				case 'x':
					w = 4
				case 'u':
					w = 6
				case 'U':
					w = 10
				default:
					w = 2
				}
			case single && r[i] == '\'':
				w = 2
			}
			if last || escapedBreak {
				end = i
				break
			}
			if off == v {
				return line, i + 1
			}
			v++
			i += w
		}
		if off == v || last {
			return line, end + 1
		}
		// The line break: nothing when escaped; else a line feed per blank
		// line that follows, or one space (a line feed in literal blocks and
		// around more-indented lines of folded ones) when none does.
		next := line + 1
		for next <= len(l.lines) && blankFrom(lineAt(next), 0) {
			next++
		}
		blanks := next - line - 1
		switch {
		case escapedBreak:
		case n.Style&yaml.LiteralStyle != 0:
			v += 1 + blanks
		case n.Style&yaml.FoldedStyle != 0 && (indent(r) > bindent || indent(lineAt(next)) > bindent):
			v += 1 + blanks
		case blanks > 0:
			v += blanks
		default:
			v++
		}
		if off < v {
			return line, end + 1
		}
		line = next
		start = bindent
		if !block {
			start = indent(lineAt(line))
		}
	}
	return n.Line, n.Column
}

// blockHeader finds the header (| or >) of block scalar n: its line, and
// its indentation indicator (0 when there is none). The node's position
// is that of its anchor or tag when it has one, which may be on an earlier
// line than the header.
func (l *loader) blockHeader(n *yaml.Node) (line, indicator int) {
	col := n.Column - 1
	for line = n.Line; line >= 1 && line <= len(l.lines); line, col = line+1, 0 {
		r := []rune(l.lines[line-1])
		for i := col; i < len(r); i++ {
			switch r[i] {
			case ' ', '\t':
				continue
			case '#':
				i = len(r) // a comment: on to the next line
				continue
			case '|', '>':
				for j := i + 1; j < len(r) && j <= i+2; j++ {
					if r[j] >= '1' && r[j] <= '9' {
						return line, int(r[j] - '0')
					}
				}
				return line, 0
			}
			// An anchor or a tag: skip to the blank after it.
			for i < len(r) && r[i] != ' ' && r[i] != '\t' {
				i++
			}
		}
	}
	return n.Line, 0
}

// blockParentIndents maps every block scalar under doc to the indentation
// (0-based column) of the block mapping or sequence it is written in, -1
// at the top level: what the YAML scanner adds an indentation indicator
// to. It runs before merge keys copy nodes into other mappings.
func (l *loader) blockParentIndents(doc *yaml.Node) map[*yaml.Node]int {
	out := map[*yaml.Node]int{}
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		for i, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				switch {
				case n.Kind == yaml.MappingNode && i%2 == 1:
					out[c] = n.Content[i-1].Column - 1 // the key's column
				case n.Kind == yaml.SequenceNode:
					out[c] = l.entryColumn(n)
				default:
					out[c] = -1
				}
			}
			walk(c)
		}
	}
	walk(doc)
	return out
}

// entryColumn returns the 0-based column of the - of the first item of
// block sequence n: the node's own position is its anchor's or tag's when
// it has one.
func (l *loader) entryColumn(n *yaml.Node) int {
	if len(n.Content) > 0 && n.Content[0].Line >= 1 && n.Content[0].Line <= len(l.lines) {
		first := n.Content[0]
		r := []rune(l.lines[first.Line-1])
		for i := min(first.Column-2, len(r)-1); i >= 0; i-- {
			if r[i] == '-' {
				return i
			}
			if r[i] != ' ' && r[i] != '\t' {
				break
			}
		}
	}
	return n.Column - 1
}

func (l *loader) loadActions(n *yaml.Node, r *Rule) bool {
	if n.Kind != yaml.SequenceNode {
		l.errNode(n, "actions: want a list of note, reply, set, assign, alert or page, got %s", describe(n))
		return false
	}
	if len(n.Content) == 0 {
		l.errNode(n, "actions: empty: a rule needs at least one note, reply, set, assign, alert or page")
		return false
	}
	ok := true
	m := &updateMerger{l: l, at: map[string]setAt{}}
	updateAt := -1
	for _, item := range n.Content {
		item = resolve(item)
		if item.Kind != yaml.MappingNode {
			l.errNode(item, "action: want a mapping such as note: TEXT, got %s", describe(item))
			ok = false
			continue
		}
		pairs, _ := l.mapping(item, "action", nil)
		if len(pairs) == 0 {
			l.errNode(item, "action: empty: want one of %s", strings.Join(actKeys, ", "))
			ok = false
			continue
		}
		if len(pairs) > 1 {
			l.errNode(pairs[1].key, "action: one kind per list item, found %s and %s (start a new item with -)", pairs[0].key.Value, pairs[1].key.Value)
			ok = false
			continue
		}
		k, v := pairs[0].key, pairs[0].val
		switch k.Value {
		case "note", "reply":
			t, good := l.text(v, k.Value, textHTML)
			if !good {
				ok = false
				continue
			}
			kind := ActionNote
			if k.Value == "reply" {
				kind = ActionReply
			}
			r.actions = append(r.actions, actionSpec{kind: kind, text: t})
		case "set", "assign":
			var good bool
			if k.Value == "set" {
				good = m.set(v)
			} else {
				good = m.assign(v)
			}
			if !good {
				ok = false
				continue
			}
			if updateAt < 0 {
				updateAt = len(r.actions)
				r.actions = append(r.actions, actionSpec{kind: ActionUpdate})
			}
		case "alert":
			a, good := l.alert(v)
			if !good {
				ok = false
				continue
			}
			r.actions = append(r.actions, a)
		case "page":
			a, good := l.page(v)
			if !good {
				ok = false
				continue
			}
			r.actions = append(r.actions, a)
		default:
			l.errNode(k, "unknown action %q (want one of %s)", k.Value, strings.Join(actKeys, ", "))
			ok = false
		}
	}
	if updateAt >= 0 {
		r.actions[updateAt].update = &m.upd
		r.actions[updateAt].assignEmail = m.email
		r.actions[updateAt].setTemplates = m.tmpls
	}
	return ok
}

// text compiles a template scalar whose values are written as kind says.
func (l *loader) text(n *yaml.Node, what string, kind textKind) (*template, bool) {
	s, ok := l.str(n, what)
	if !ok {
		return nil, false
	}
	if strings.TrimSpace(s) == "" {
		l.errNode(n, "%s: empty text", what)
		return nil, false
	}
	return l.compileText(n, s, what, kind)
}

// compileText compiles template s, the value of scalar n.
func (l *loader) compileText(n *yaml.Node, s, what string, kind textKind) (*template, bool) {
	t, errs := parseTemplate(s)
	for _, e := range errs {
		l.errIn(n, e.Off, "%s: %s", what, e.Msg)
	}
	if t != nil {
		t.kind = kind
		for _, p := range t.parts {
			if p.expr != nil {
				p.expr.at = l.at(n, p.off)
			}
		}
	}
	return t, t != nil
}

func (l *loader) alert(n *yaml.Node) (actionSpec, bool) {
	a := actionSpec{kind: ActionAlert}
	pairs, ok := l.mapping(n, "alert", alertKeys)
	if !ok {
		return a, false
	}
	var hasChannel, hasText bool
	for _, p := range pairs {
		switch p.key.Value {
		case "channel":
			hasChannel = true
			if c, good := l.actionChannel(p.val, "alert"); good {
				a.channel = c
			} else {
				ok = false
			}
		case "text":
			hasText = true
			t, good := l.text(p.val, "alert text", textChat)
			ok = ok && good
			a.text = t
		case "mention":
			t, good := l.text(p.val, "alert mention", textMention)
			ok = ok && good
			a.mention = t
		}
	}
	if !hasChannel {
		l.errNode(n, "alert: missing channel")
		ok = false
	}
	if !hasText {
		l.errNode(n, "alert: missing text")
		ok = false
	}
	return a, ok
}

// defaultPageText is what a page says when the rule gives no text:.
const defaultPageText = "Ticket #{{ ticket.id }} needs the on-call: {{ ticket.subject }}"

// page loads page: {policy: NAME, channel: ALIAS|#chan, text: TEMPLATE}.
// The channel defaults to the oncall alias; the policy must be one of the
// oncall: section's.
func (l *loader) page(n *yaml.Node) (actionSpec, bool) {
	a := actionSpec{kind: ActionPage}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		l.errNode(n, "page: want a mapping such as {policy: %s}, got %s", n.Value, describe(n))
		return a, false
	}
	pairs, ok := l.mapping(n, "page", pageKeys)
	if !ok {
		return a, false
	}
	ok = len(pairs)*2 == len(n.Content)
	var hasPolicy, hasChannel bool
	for _, p := range pairs {
		switch p.key.Value {
		case "policy":
			hasPolicy = true
			name, good := l.str(p.val, "page policy")
			if !good {
				ok = false
				continue
			}
			a.policy = name
			switch {
			case l.oncallBad:
				// The oncall: section has errors of its own: reported there.
			case l.oncall == nil:
				l.errNode(p.val, "page: unknown escalation policy %q: the file has no oncall: section defining policies", name)
				ok = false
			case l.oncall.Policy(name) == nil:
				var names []string
				for _, po := range l.oncall.Policies {
					names = append(names, po.Name)
				}
				sort.Strings(names)
				known := "none are defined"
				if len(names) > 0 {
					known = "known: " + strings.Join(names, ", ")
				}
				l.errNode(p.val, "page: unknown escalation policy %q (%s)", name, known)
				ok = false
			}
		case "channel":
			hasChannel = true
			if c, good := l.actionChannel(p.val, "page"); good {
				a.channel = c
			} else {
				ok = false
			}
		case "text":
			t, good := l.text(p.val, "page text", textChat)
			ok = ok && good
			a.text = t
		}
	}
	if !hasPolicy {
		l.errNode(n, "page: missing policy (the name of an escalation policy under oncall: policies:)")
		ok = false
	}
	if !hasChannel {
		if v, alias := l.channelAlias("oncall"); alias {
			a.channel = v
		} else {
			l.errNode(n, "page: missing channel: name one, or define the oncall alias under channels: (where the page card goes)")
			ok = false
		}
	}
	if a.text == nil {
		t, errs := parseTemplate(defaultPageText)
		if len(errs) > 0 || t == nil {
			l.errNode(n, "page: default text does not compile")
			return a, false
		}
		a.text = t
	}
	return a, ok
}

// actionChannel reads the channel: of an action (what is "alert" or "page"):
// an alias under channels: or a channel literal (#name or a channel id).
func (l *loader) actionChannel(n *yaml.Node, what string) (string, bool) {
	c, ok := l.str(n, what+" channel")
	if !ok {
		return "", false
	}
	if v, alias := l.channelAlias(c); alias {
		return v, true
	}
	if isChannelLiteral(c) {
		return c, true
	}
	l.errNode(n, "%s: unknown channel %q: not an alias under channels: and not #name or a channel id", what, c)
	return "", false
}

// channelAlias resolves an alias of the file's channels: section.
func (l *loader) channelAlias(name string) (string, bool) {
	v, ok := l.chans[name]
	return v, ok
}

// updateMerger merges every set: and assign: of a rule into one update,
// rejecting two different values for one field.
type updateMerger struct {
	l     *loader
	upd   sdclient.TicketUpdate
	email string
	// at records where each field was first set, and its value for messages.
	at map[string]setAt
	// tmpls are the values that are templates.
	tmpls []setTemplate
}

// template compiles the value src of a set: field (key names a custom
// field, index >= 0 a tag) from node n when it has {{ }}, to be rendered
// per ticket; it reports false (with the errors) when it does not compile.
func (m *updateMerger) template(field, key string, index int, src string, n *yaml.Node, what string) bool {
	if !strings.Contains(src, "{{") {
		return true
	}
	t, ok := m.l.compileText(n, src, what, textPlain)
	if !ok {
		return false
	}
	m.tmpls = append(m.tmpls, setTemplate{field: field, key: key, index: index, tmpl: t})
	return true
}

type setAt struct {
	line int
	val  any
}

// claim records field = val from node n; it reports false (with an error)
// when the field already holds a different value.
func (m *updateMerger) claim(field string, val any, n *yaml.Node, what string) bool {
	if prev, ok := m.at[field]; ok {
		if !reflect.DeepEqual(prev.val, val) {
			m.l.errNode(n, "%s: conflicting values for %s: %v here, %v at line %d", what, field, fmtAny(val), fmtAny(prev.val), prev.line)
			return false
		}
		return true
	}
	m.at[field] = setAt{line: n.Line, val: val}
	return true
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func (m *updateMerger) set(n *yaml.Node) bool {
	l := m.l
	pairs, ok := l.mapping(n, "set", setKeys)
	if !ok {
		return false
	}
	if len(pairs) == 0 && len(n.Content) == 0 {
		l.errNode(n, "set: empty: want one or more of %s", strings.Join(setKeys, ", "))
		return false
	}
	good := len(pairs)*2 == len(n.Content)
	for _, p := range pairs {
		f, v := p.key.Value, p.val
		what := "set " + f
		switch f {
		case "status", "priority", "group_id", "responder_id":
			x, ok := l.intValue(v, what)
			if !ok {
				good = false
				continue
			}
			switch {
			case f == "priority" && (x < 1 || x > 4):
				l.errNode(v, "set priority: %d is not a priority: want 1 (low) to 4 (urgent)", x)
				good = false
				continue
			case f == "status" && x < 2:
				l.errNode(v, "set status: %d is not a status: want 2 (open), 3 (pending), 4 (resolved), 5 (closed) or a custom status id", x)
				good = false
				continue
			case x < 0:
				l.errNode(v, "%s: want an id (0 to clear), got %d", what, x)
				good = false
				continue
			case x > 1<<31 && (f == "status" || f == "priority"):
				l.errNode(v, "%s: %d is out of range", what, x)
				good = false
				continue
			}
			if !m.claim(f, x, v, "set") {
				good = false
				continue
			}
			switch f {
			case "status":
				m.upd.Status = sdclient.Ptr(int(x))
			case "priority":
				m.upd.Priority = sdclient.Ptr(int(x))
			case "group_id":
				m.upd.GroupID = sdclient.Ptr(x)
			case "responder_id":
				m.upd.ResponderID = sdclient.Ptr(x)
			}
		case "type", "category", "sub_category":
			s, ok := l.str(v, what)
			if !ok || !m.claim(f, s, v, "set") || !m.template(f, "", -1, s, v, what) {
				good = false
				continue
			}
			switch f {
			case "type":
				m.upd.Type = sdclient.Ptr(s)
			case "category":
				m.upd.Category = sdclient.Ptr(s)
			default:
				m.upd.SubCategory = sdclient.Ptr(s)
			}
		case "tags":
			if v.Kind != yaml.SequenceNode {
				l.errNode(v, "set tags: want a list of strings, got %s", describe(v))
				good = false
				continue
			}
			tags := []string{}
			for _, t := range v.Content {
				s, ok := l.str(resolve(t), "set tags")
				if !ok || !m.template("tags", "", len(tags), s, resolve(t), "set tags") {
					good = false
					continue
				}
				tags = append(tags, s)
			}
			if !m.claim(f, tags, v, "set") {
				good = false
				continue
			}
			m.upd.Tags = &tags
		case "custom_fields":
			cp, ok := l.mapping(v, "set custom_fields", nil)
			if !ok {
				good = false
				continue
			}
			for _, c := range cp {
				if c.val.Kind != yaml.ScalarNode {
					l.errNode(c.val, "set custom_fields %s: want a string, number, boolean or null, got %s", c.key.Value, describe(c.val))
					good = false
					continue
				}
				var x any
				if err := c.val.Decode(&x); err != nil {
					l.errNode(c.val, "set custom_fields %s: %v", c.key.Value, err)
					good = false
					continue
				}
				if !m.claim("custom_fields."+c.key.Value, x, c.val, "set") {
					good = false
					continue
				}
				if str, isStr := x.(string); isStr && !m.template("custom_fields", c.key.Value, -1, str, c.val, "set custom_fields "+c.key.Value) {
					good = false
					continue
				}
				if m.upd.CustomFields == nil {
					m.upd.CustomFields = map[string]any{}
				}
				m.upd.CustomFields[c.key.Value] = x
			}
		}
	}
	return good
}

func (m *updateMerger) assign(n *yaml.Node) bool {
	l := m.l
	const want = "want an agent's e-mail or numeric id"
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!int") {
		l.errNode(n, "assign: %s, got %s", want, describe(n))
		return false
	}
	if id, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		if id <= 0 {
			l.errNode(n, "assign: %s, got %d", want, id)
			return false
		}
		if m.email != "" {
			l.errNode(n, "assign: conflicting assignees: agent %d here, %s earlier", id, m.email)
			return false
		}
		if !m.claim("responder_id", id, n, "assign") {
			return false
		}
		m.upd.ResponderID = sdclient.Ptr(id)
		return true
	}
	email := strings.TrimSpace(n.Value)
	if i := strings.Index(email, "@"); i <= 0 || i == len(email)-1 || strings.ContainsAny(email, " \t,;<>") {
		l.errNode(n, "assign: %s, got %q", want, n.Value)
		return false
	}
	if prev, ok := m.at["responder_id"]; ok {
		l.errNode(n, "assign: conflicting assignees: %s here, responder_id %v at line %d", email, prev.val, prev.line)
		return false
	}
	if !m.claim("assign", email, n, "assign") {
		return false
	}
	m.email = email
	return true
}
