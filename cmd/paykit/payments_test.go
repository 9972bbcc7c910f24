package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNotificationToken: payments create --notification-token sends the
// spec's notification_token, and the token, a secret, appears in no
// output (-v logs included).
func TestNotificationToken(t *testing.T) {
	e := newEnv(t)
	const token = "tok_LEAKCHECK_51f0"
	r := e.run("", "-v", "payments", "create", "--ext-id", "o-tok", "--amount", "100", "--notify-url", "https://shop.example/hook",
		"--notification-token", token, "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d, %q", r.code, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, token) {
		t.Fatal("the notification token was printed")
	}
	bodies := e.posted("/v1/payments")
	if len(bodies) != 1 {
		t.Fatalf("%d payment creations sent, want 1", len(bodies))
	}
	var sent map[string]any
	if err := json.Unmarshal(bodies[0], &sent); err != nil {
		t.Fatal(err)
	}
	if sent["notification_token"] != token || sent["notify_url"] != "https://shop.example/hook" || sent["ext_id"] != "o-tok" {
		t.Fatalf("the body sent: %s", bodies[0])
	}
}
