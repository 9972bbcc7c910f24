package store

// syncFault, when set, is asked before each sync of the -wal file (syncWAL)
// and fails that sync with its error, as a failing disk's fsync would. Only
// a binary built with the paykit_faultinject tag sets it (faultinject.go,
// for the fault oracle of internal/sandboxcli); in every other build it is
// nil and syncWAL's path is the shipped one.
var syncFault func() error
