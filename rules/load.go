package rules

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deskbot/deskbot/internal/yamlpos"
	"github.com/deskbot/deskbot/oncall"
)

// Error is one problem of a rules file, positioned in the file; its Scope
// names the rule (rule "NAME") for problems inside a rule, so that Error
// reads FILE:LINE:COL: rule "NAME": message.
type Error = yamlpos.Error

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
)

// topKeys are the keys of the file's top level. Besides, every key
// starting with x- (isAnchorKey) holds anchors to merge (as in docker
// compose files); the loader does not read them otherwise.
var topKeys = yamlpos.Keys{
	Allowed: []string{"version", "channels", "oncall", "rules"},
	Extra:   isAnchorKey,
	Want:    "version, channels, oncall, rules, or x-NAME to hold anchors",
}

// isAnchorKey reports whether a top-level key holds anchors: x-NAME.
func isAnchorKey(k string) bool { return len(k) > 2 && strings.HasPrefix(k, "x-") }

var (
	ruleKeys  = []string{"name", "query", "if", "every", "cron", "catch_up", "once", "group_over", "max_firings_per_cycle", "priority", "actions", "digest"}
	alertKeys = []string{"channel", "text", "mention"}
	pageKeys  = []string{"policy", "channel", "text"}
	setKeys   = []string{"status", "priority", "group_id", "responder_id", "tags", "type", "category", "sub_category", "custom_fields"}
	actKeys   = []string{"note", "reply", "set", "assign", "alert", "page", "dm"}
)

// Load parses and checks a rules file. filename is used in messages only.
// On any problem it returns a *LoadError listing all of them.
func Load(filename string, data []byte, opts ...Option) (*Set, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	l := &loader{rep: &yamlpos.Reporter{File: filename}, cfg: cfg, src: yamlpos.NewSource(data)}
	s := l.load(data)
	if l.rep.Len() > 0 {
		return nil, &LoadError{Errors: l.rep.Errors()}
	}
	s.needsPeople = usesPeople(s.rules)
	return s, nil
}

// loader reads one rules file.
type loader struct {
	// rep collects the problems; its Scope names the rule being loaded.
	rep   *yamlpos.Reporter
	cfg   config
	src   *yamlpos.Source
	chans map[string]string
	// oncall is the parsed oncall: section (nil when absent or broken);
	// oncallBad is set when it had errors, so that page actions naming
	// one of its policies are not reported a second time.
	oncall    *oncall.Config
	oncallBad bool
	// digests are the digest rules loaded (rules with digest:).
	digests []*Digest
}

// setRule names the rule being loaded in the problems reported from now
// on ("" for none).
func (l *loader) setRule(name string) {
	l.rep.Scope = ""
	if name != "" {
		l.rep.Scope = fmt.Sprintf("rule %q", name)
	}
}

// errIn reports a problem at rune offset off inside the text of scalar n.
func (l *loader) errIn(n *yaml.Node, off int, format string, args ...any) {
	line, col := l.src.Pos(n, off)
	l.rep.At(line, col, format, args...)
}

// at returns the function that positions a run-time error of an
// expression starting at rune offset base of scalar n.
func (l *loader) at(n *yaml.Node, base int) func(off int) string {
	return func(off int) string {
		line, col := l.src.Pos(n, base+off)
		return fmt.Sprintf("%s:%d:%d", l.rep.File, line, col)
	}
}

// parse parses the file, reporting a syntax error; nil when it has none.
func (l *loader) parse(data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yamlpos.Unmarshal(data, &doc); err != nil {
		if l.syntaxHints() {
			return nil
		}
		line, msg := yamlpos.SyntaxProblem(err)
		l.rep.At(line, 1, "invalid YAML: %s", msg)
		return nil
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		l.rep.At(1, 1, "empty rules file: want a mapping starting with version: 1")
		return nil
	}
	return &doc
}

// load reads the file.
func (l *loader) load(data []byte) (set *Set) {
	doc := l.parse(data)
	if doc == nil {
		return nil
	}
	root := yamlpos.Resolve(doc.Content[0])
	l.src.Index(doc)
	// Merge keys are expanded before anything is read: first those outside
	// the rules (the top level, channels:, oncall:, x- keys holding
	// anchors), then each rule's as it is loaded, so that problems with a
	// merge name the rule; whatever is left (never read) last.
	mg := newMerger()
	defer func() {
		mg.walk(doc)
		l.mergeErrs(mg.take())
	}()
	l.mergeOutsideRules(mg, root)
	pairs, ok := l.rep.Mapping(root, "the rules file", topKeys)
	if !ok {
		return nil
	}
	s := &Set{file: l.rep.File, channels: map[string]string{}, byName: map[string]*Rule{}}
	l.chans = s.channels
	top := yamlpos.ByKey(pairs)
	l.loadVersion(root, top)
	if p, has := top["channels"]; has && !yamlpos.IsNull(p.Val) {
		l.channels(p.Val, s)
	}
	if p, has := top["oncall"]; has {
		// Loaded before the rules, wherever it is in the file, so that page
		// actions can be checked against its policies.
		l.loadOnCall(p.Val, s)
	}
	l.loadRules(root, top, mg, s)
	return s
}

// mergeOutsideRules expands the merge keys of the top level and of every
// section but rules:.
func (l *loader) mergeOutsideRules(mg *merger, root *yaml.Node) {
	if root.Kind != yaml.MappingNode {
		return
	}
	mg.mapping(root)
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := yamlpos.Resolve(root.Content[i]); k.Kind == yaml.ScalarNode && k.Value == "rules" {
			continue
		}
		mg.walk(root.Content[i])
		mg.walk(root.Content[i+1])
	}
	l.mergeErrs(mg.take())
}

// loadVersion checks version: 1.
func (l *loader) loadVersion(root *yaml.Node, top map[string]yamlpos.Pair) {
	p, has := top["version"]
	if !has {
		l.rep.Node(root, "missing version: 1")
	} else if n, ok := l.rep.Int(p.Val, "version"); ok && n != 1 {
		l.rep.Node(p.Val, "unsupported version %d: this deskbot reads version 1", n)
	}
}

// loadRules loads the rules: list into s.
func (l *loader) loadRules(root *yaml.Node, top map[string]yamlpos.Pair, mg *merger, s *Set) {
	p, has := top["rules"]
	switch {
	case !has:
		l.rep.Node(root, "missing rules: (a list of rules)")
		return
	case p.Val.Kind == yaml.ScalarNode && p.Val.Tag == "!!null":
		return // rules: with nothing under it: a valid, empty file
	case p.Val.Kind != yaml.SequenceNode:
		l.rep.Node(p.Val, "rules: want a list of rules, got %s", yamlpos.Describe(p.Val))
		return
	}
	firstAt := map[string]*yaml.Node{}
	for _, item := range p.Val.Content {
		mg.walk(item)
		merrs := mg.take()
		if item.Kind == yaml.AliasNode && yamlpos.Resolve(item).Kind == yaml.MappingNode {
			// A whole rule repeated by an alias has the same name as the
			// original: say so where the alias is, not at the original.
			l.rep.Node(item, "rule: *%s repeats the rule of line %d, and rule names must be unique: copy the rule and rename it", item.Value, yamlpos.Resolve(item).Line)
			continue
		}
		r := l.loadRule(yamlpos.Resolve(item), firstAt, merrs)
		if r != nil {
			r.plan, r.set, r.place = s.terms.plan(r.local), s, len(s.rules)
			s.rules = append(s.rules, r)
			s.byName[r.Name] = r
		}
	}
	s.digests = l.digests
}

// loadOnCall parses the oncall: section and merges its positioned errors.
func (l *loader) loadOnCall(n *yaml.Node, s *Set) {
	cfg, errs := oncall.ParseConfig(l.rep.File, n)
	for _, e := range errs {
		l.rep.Add(e)
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

// mapping reads mapping n (what names it in messages) whose keys must be
// among allowed (nil: any).
func (l *loader) mapping(n *yaml.Node, what string, allowed []string) ([]yamlpos.Pair, bool) {
	return l.rep.Mapping(n, what, yamlpos.Keys{Allowed: allowed, Hint: func(key string) string { return keyHint(what, key) }})
}

// nonBlank returns the value of a string scalar that is more than blanks;
// blank, it reports WHAT: empty.
func (l *loader) nonBlank(n *yaml.Node, what, empty string) (string, bool) {
	s, ok := l.str(n, what)
	if !ok {
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		l.rep.Node(n, "%s: %s", what, empty)
		return "", false
	}
	return s, true
}

// str returns the value of a string scalar; an unquoted {{ }} gets a hint.
func (l *loader) str(n *yaml.Node, what string) (string, bool) {
	if yamlpos.IsUnquotedTemplate(n) {
		l.rep.Node(n, "%s: %s", what, l.src.TemplateHint(n))
		return "", false
	}
	return l.rep.Str(n, what)
}

func (l *loader) channels(n *yaml.Node, s *Set) {
	pairs, ok := l.mapping(n, "channels", nil)
	if !ok {
		return
	}
	for _, p := range pairs {
		v, ok := l.str(p.Val, fmt.Sprintf("channel %q", p.Key.Value))
		if !ok {
			continue
		}
		if !isChannelLiteral(v) {
			l.rep.Node(p.Val, "channel %q: want \"#name\" or a channel id such as C0123ABCD, got %q", p.Key.Value, v)
			continue
		}
		s.channels[p.Key.Value] = v
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
		l.rep.Node(e.n, "%s", e.msg)
	}
}
