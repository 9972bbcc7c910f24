package sandbox

import "github.com/paykit-dev/paykit-go/sandbox/internal/store"

// SchemaVersion is the version of the database layout this sandbox writes,
// kept in PRAGMA user_version. A file of an older version is migrated when
// opened; one of a newer version is refused.
const SchemaVersion = store.SchemaVersion
