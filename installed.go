package skillhost

// The [trust] section of skillhost.toml belongs to `skillhost install`
// (install/trustconf, which links no signature code); linking its reader
// lets an engine read an operator config that has one.
import _ "github.com/skillhost/skillhost/install/trustconf"
