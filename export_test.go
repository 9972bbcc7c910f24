package paykit

import (
	"bytes"
	"log/slog"
	"sync"
)

// Test-only exports, compiled into test binaries alone, so that the
// internal and the external (paykit_test) tests share one helper.

// TestLog collects what a logger writes from many goroutines at once, for
// tests that assert what was, and was not, logged.
type TestLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (l *TestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *TestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logger returns a debug-level JSON logger writing to l.
func (l *TestLog) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// OperationRow is one row of the operation table, as the external tests
// see it.
type OperationRow struct{ Name, Method, Route string }

// OperationRows lists the operation table (policy.go's operations).
func OperationRows() []OperationRow {
	rows := make([]OperationRow, len(operations))
	for i, op := range operations {
		rows[i] = OperationRow{op.name, op.method, op.route}
	}
	return rows
}
