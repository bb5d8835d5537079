// Package filter is the service desk's ticket filter-expression language
// (GET /tickets/filter?query="..."): one grammar shared by the API client,
// which validates and encodes queries, the desk simulator, which parses and
// evaluates them, the rules engine and the chat bot.
//
// # Syntax
//
//	expr    = operand { "AND" operand }  |  operand { "OR" operand }
//	operand = term | "(" expr ")"
//	term    = field ":" [ ">" | "<" ] value
//	field   = [A-Za-z_][A-Za-z0-9_]*          (case-sensitive)
//	value   = integer | 'string' | date | null | true | false | word
//
// In detail:
//
//   - field:v is equality; field:>v is field >= v and field:<v is
//     field <= v: both inclusive, as on the desk. There is no >= and no
//     negation.
//   - Spaces, tabs and newlines separate tokens. Spaces are tolerated after
//     ':' and after ':>' / ':<' (agent_id:< 1), but not before ':'.
//   - AND and OR are uppercase. One level may not mix them: an OR group
//     combined with AND must be parenthesized, as in
//     agent_id:7 AND (status:2 OR status:3). Parentheses nest up to 100
//     deep.
//   - Integers are decimal int64, bare (priority:4) or quoted
//     (priority:'4'). A quoted integer keeps KindString; Schema.Validate and
//     Eval treat it as the number for number fields.
//   - Strings are single-quoted; inside them \' is a quote and \\ a
//     backslash, and no other escape exists. A double quote may not appear
//     anywhere, not even in a string: the desk wraps the whole query in
//     double quotes, so a '"' would end it. Parse rejects one; Encode and
//     Validate reject a value built in code that holds one.
//   - Dates are 'yyyy-mm-dd' (a whole UTC day) and datetimes are RFC3339
//     ('2024-01-31T09:00:00Z', kept in UTC); both may also be bare.
//   - null, true and false are bare (any letter case). Any other bare word,
//     such as the open of the deskbot macro status:open, parses as KindWord
//     so that callers can expand it with Rewrite; Schema.Validate rejects
//     words and Eval never matches them.
//
// # Printing
//
// String prints the canonical text: terms as field:value with no spaces,
// " AND " / " OR " between operands, nested groups in parentheses, strings
// and dates single-quoted. Parse(x.String()) is Equal to x for any parsed x.
// Encode wraps that text in double quotes and percent-encodes it (%20 for
// spaces); it and CheckLen enforce MaxLen, 512 bytes of canonical text.
//
// # Evaluation
//
// Eval runs an expression against a Record, which gives the values of each
// field (none when absent or null; several for tag). A term matches when any
// value of the field satisfies it:
//   - Strings compare case-insensitively; :> and :< never match strings.
//   - A number term matches a number, or a string holding that integer, and
//     the other way round.
//   - A date-only term covers its whole UTC day: created_at:'2024-01-05' is
//     any instant that day, created_at:>'2024-01-01' is >= 2024-01-01T00:00Z
//     and created_at:<'2024-01-31' is <= 2024-01-31T23:59:59.999999999Z.
//     Datetimes compare exactly.
//   - field:null matches when the field has no value. In fields whose name
//     ends in _id a 0 is no value too, so agent_id:0 and agent_id:null are
//     the same predicate (unassigned), and a record's 0 never satisfies
//     agent_id:>... or agent_id:<....
//   - A word never matches; an empty And matches everything, an empty Or
//     nothing.
//
// # What it owns and may import
//
// The grammar, the printer and encoder, the schema check (Schema.Validate)
// and the evaluator. It is the lowest floor of deskbot and imports no
// deskbot package; sdclient, sdsim, rules, scheduler and bot import it.
package filter
