// Package yamlpos reads YAML strictly and says where a problem is. It
// serves the rules loader (rules) and the on-call section (oncall), which
// read the same file and must report problems alike:
//
//   - [Error] and [Reporter]: problems positioned FILE:LINE:COL, one line
//     each, sorted in file order;
//   - [Reporter.Mapping], [Reporter.Str], [Reporter.Int]: decoding a
//     yaml.v3 node tree with unknown keys, duplicate keys and wrong types
//     reported where they are written;
//   - [Source]: positions inside a scalar's text (a rune offset of the
//     value mapped back to the line and column of the file, through quotes,
//     escapes, folding and block scalars), and the file's lines;
//   - [Unmarshal] and [SyntaxProblem]: parsing that survives hostile input,
//     and yaml.v3's syntax errors with the line counted as the file does;
//   - hints for a common mistake: an unquoted {{ ... }} template
//     ([IsUnquotedTemplate], [Source.TemplateHint], [FindUnquotedTemplates]).
//
// It knows nothing of rules or schedules: the messages it writes name only
// YAML things (keys, mappings, strings). It imports only the standard
// library and gopkg.in/yaml.v3, so that every floor of deskbot may use it.
package yamlpos
