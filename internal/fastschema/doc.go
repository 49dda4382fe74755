// Package fastschema checks JSON text against the JSON Schemas tools
// commonly declare, without decoding it: no encoding/json, no interface
// values, no math/big, and no allocation on the valid path. The registry
// runs it before the full validator (github.com/santhosh-tekuri/jsonschema/v6
// as packs.CompileSchema configures it: Draft 2020-12, formats asserted,
// Go regular expressions); when the fast path cannot say a document is
// valid, the full validator decides and words the violations.
//
// The contract is one-sided. Plan.Valid returning true means the full
// validator accepts the document; false means nothing more than "ask the
// full validator". A wrong false only costs time, a wrong true would let
// bad arguments through, so every rule below is written to the
// validator's behaviour, and where matching it exactly would be costly the
// fast path declines instead (a differential fuzz test holds it to this).
//
// # The subset
//
// Compile returns a plan only for schemas made of:
//
//   - true, false, and objects whose every keyword is one of these;
//   - type (a name or a list of distinct names);
//   - enum and const with null, boolean, number or string members
//     (numbers compare by value: 1, 1.0 and 10e-1 are equal);
//   - minimum, maximum, exclusiveMinimum, exclusiveMaximum (compared
//     exactly, in decimal);
//   - minLength, maxLength (in code points), minItems, maxItems;
//   - pattern (Go regexp syntax, as the validator compiles it: the
//     validator uses Go's RE2, not ECMA-262, and so does the fast path);
//   - format: date-time, date, time, uuid, email, hostname, ipv4, uri and
//     iri are checked as the validator checks them; a name the validator
//     does not know is an annotation; ipv6, duration, period, regex,
//     uri-reference, iri-reference, uri-template, json-pointer,
//     relative-json-pointer and semver have no plan;
//   - properties, required (at most 64 names), additionalProperties (a
//     boolean or a schema), items (a schema);
//   - the annotations title, description, default, examples, $comment,
//     deprecated, readOnly, writeOnly, contentEncoding and
//     contentMediaType (content is not asserted by the registry), and
//     $schema at the root when it names Draft 2020-12.
//
// Anything else ($ref and $defs, anyOf and the other applicators,
// multipleOf, uniqueItems, patternProperties, min/maxProperties, unknown
// keywords, keyword values of the wrong type, schemas nested more than 32
// deep) means no plan.
//
// # Documents
//
// The scanner follows encoding/json as the validator's decoder uses it:
// exactly one JSON value with white space (space, tab, CR, LF) around it;
// strings without raw control characters and with valid escapes; numbers
// in the JSON grammar; nesting below 512 levels (deeper documents are left
// to the validator, which allows 10,000).
//
// The fast path declines (Valid returns false, the validator decides):
//
//   - a string that a keyword reads (enum, const, lengths, pattern,
//     format, an object name where names matter) holding invalid UTF-8 or
//     a lone surrogate escape: the validator reads U+FFFD in their place;
//     such bytes in values no keyword reads are accepted, as the
//     validator accepts them;
//   - a number longer than 128 characters, or whose decimal exponent
//     exceeds ±1000, when a keyword reads it: math/big, which the
//     validator uses, gives up on large exponents depending on how the
//     number is written (and the validator's minimum and maximum checks
//     then panic on the nil value);
//   - a formatted string the format checks here do not decide (a uri with
//     user info or an IP literal, a time written "+1:00:00Z"…).
//
// A name given twice in an object is checked at each occurrence: the
// validator keeps only the last value, so when every value passes, the
// last one does; when an earlier one fails, the validator decides.
package fastschema
