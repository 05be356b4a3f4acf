package mysql

// Exported for the tests of package mysql_test, which opens databases through dbtest
// (itself an importer of this package).
var (
	LockName    = lockName
	LockNameSQL = lockNameSQL
	ClientAddr  = clientAddr
)
