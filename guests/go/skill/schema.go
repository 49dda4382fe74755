package skill

import (
	"encoding/json"
	"reflect"

	"github.com/skillhost/skillhost/internal/goschema"
)

// Schemaer is implemented by types that describe their own JSON schema.
// The SDK uses the returned document as is (field tags may still add a
// description, default or examples) instead of deriving one by reflection;
// use it for types with custom JSON encodings.
type Schemaer = goschema.Schemaer

// schema is a derived JSON schema document; the inference itself lives in
// internal/goschema, shared with skillhost's native Go tools.
type schema = goschema.Schema

// SchemaOf returns the JSON Schema the SDK derives for T's JSON encoding,
// as used for tool input and output schemas. It fails on types JSON cannot
// carry (channels, functions, complex numbers, maps whose keys do not
// encode as strings) and on malformed field tags, naming the field. See the
// package documentation for the rules and the tag grammar.
func SchemaOf[T any]() (json.RawMessage, error) {
	return goschema.Of[T]()
}

func deriveSchema(t reflect.Type) (*schema, error) {
	return goschema.Derive(t)
}
