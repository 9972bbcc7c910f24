package peers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// The bodies the one loopback server answers: each is what the real API
// documents for the resource, with the fields the SDK's type exposes that
// such a resource carries.

// paymentJSON is a paykit GET /v1/payments/{id} answer (the root module's
// benchmark body).
const paymentJSON = `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"order-1001","amount":1500.50,"currency":"RUB",` +
	`"status":"PENDING","method":"CARD",` +
	`"requisites":{"type":"card","value":"2200123456789012","bank":"Sberbank","bank_code":"sber","holder":"IVAN I."},` +
	`"payment_url":"https://pay.example/p/6f1c2a5e","valid_until":"2026-11-22T10:20:00Z",` +
	`"created_at":"2026-11-22T10:00:00.25Z","usdt_rate":92.45}`

// paymentIntentJSON is a Stripe GET /v1/payment_intents/{id} answer, as
// Stripe's API reference shows a new PaymentIntent.
const paymentIntentJSON = `{"id":"pi_3MtwBwLkdIwHu7ix28a3tqPa","object":"payment_intent","amount":2000,"amount_capturable":0,` +
	`"amount_details":{"tip":{}},"amount_received":0,"application":null,"application_fee_amount":null,` +
	`"automatic_payment_methods":{"enabled":true},"canceled_at":null,"cancellation_reason":null,` +
	`"capture_method":"automatic","client_secret":"pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH",` +
	`"confirmation_method":"automatic","created":1680800504,"currency":"usd","customer":null,"description":null,` +
	`"last_payment_error":null,"latest_charge":null,"livemode":false,"metadata":{"order_id":"6735"},"next_action":null,` +
	`"on_behalf_of":null,"payment_method":null,"payment_method_options":{"card":{"installments":null,` +
	`"mandate_options":null,"network":null,"request_three_d_secure":"automatic"},"link":{"persistent_token":null}},` +
	`"payment_method_types":["card","link"],"processing":null,"receipt_email":null,"review":null,` +
	`"setup_future_usage":null,"shipping":null,"source":null,"statement_descriptor":null,` +
	`"statement_descriptor_suffix":null,"status":"requires_payment_method","transfer_data":null,"transfer_group":null}`

// githubUserJSON is a GitHub simple user, as it appears in an issue.
func githubUserJSON(login string, id int) string {
	u := "https://api.github.com/users/" + login
	return `{"login":"` + login + `","id":` + strconv.Itoa(id) + `,"node_id":"MDQ6VXNlcjE=",` +
		`"avatar_url":"https://github.com/images/error/` + login + `_happy.gif","gravatar_id":"",` +
		`"url":"` + u + `","html_url":"https://github.com/` + login + `","followers_url":"` + u + `/followers",` +
		`"following_url":"` + u + `/following{/other_user}","gists_url":"` + u + `/gists{/gist_id}",` +
		`"starred_url":"` + u + `/starred{/owner}{/repo}","subscriptions_url":"` + u + `/subscriptions",` +
		`"organizations_url":"` + u + `/orgs","repos_url":"` + u + `/repos","events_url":"` + u + `/events{/privacy}",` +
		`"received_events_url":"` + u + `/received_events","type":"User","site_admin":false}`
}

// issueJSON is a GitHub GET /repos/{owner}/{repo}/issues/{number} answer,
// as GitHub's REST reference shows an open issue.
var issueJSON = `{"id":1,"node_id":"MDU6SXNzdWUx","url":"https://api.github.com/repos/octocat/Hello-World/issues/1347",` +
	`"repository_url":"https://api.github.com/repos/octocat/Hello-World",` +
	`"labels_url":"https://api.github.com/repos/octocat/Hello-World/issues/1347/labels{/name}",` +
	`"comments_url":"https://api.github.com/repos/octocat/Hello-World/issues/1347/comments",` +
	`"events_url":"https://api.github.com/repos/octocat/Hello-World/issues/1347/events",` +
	`"html_url":"https://github.com/octocat/Hello-World/issues/1347","number":1347,"state":"open",` +
	`"title":"Found a bug","body":"I'm having a problem with this.","user":` + githubUserJSON("octocat", 1) + `,` +
	`"labels":[{"id":208045946,"node_id":"MDU6TGFiZWwyMDgwNDU5NDY=",` +
	`"url":"https://api.github.com/repos/octocat/Hello-World/labels/bug","name":"bug",` +
	`"description":"Something isn't working","color":"f29513","default":true}],` +
	`"assignee":` + githubUserJSON("hubot", 2) + `,"assignees":[` + githubUserJSON("hubot", 2) + `],` +
	`"milestone":null,"locked":true,"active_lock_reason":"too heated","comments":42,` +
	`"closed_at":null,"created_at":"2011-04-22T13:33:48Z","updated_at":"2011-04-22T13:33:48Z",` +
	`"closed_by":null,"author_association":"COLLABORATOR","state_reason":null,` +
	`"reactions":{"url":"https://api.github.com/repos/octocat/Hello-World/issues/1347/reactions",` +
	`"total_count":5,"+1":3,"-1":0,"laugh":0,"hooray":0,"confused":0,"heart":1,"rocket":1,"eyes":0}}`

// The resources the benchmarks fetch.
const (
	paymentID       = "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70"
	paymentIntentID = "pi_3MtwBwLkdIwHu7ix28a3tqPa"
	issueOwner      = "octocat"
	issueRepo       = "Hello-World"
	issueNumber     = 1347
)

// handler answers the three peers' endpoints with their canned bodies,
// reading every request body whole as a real server would.
func handler() http.Handler {
	payment, intent, issue := []byte(paymentJSON), []byte(paymentIntentJSON), []byte(issueJSON)
	issuePath := "/repos/" + issueOwner + "/" + issueRepo + "/issues/" + strconv.Itoa(issueNumber)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var body []byte
		switch {
		case r.Method != http.MethodGet:
		case r.URL.Path == "/v1/payments/"+paymentID:
			body = payment
		case r.URL.Path == "/v1/payment_intents/"+paymentIntentID:
			body = intent
		case r.URL.Path == issuePath:
			body = issue
		}
		if body == nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
}

// newServer starts the one loopback server every peer and raw call talks to.
func newServer(tb testing.TB, wrap func(http.Handler) http.Handler) *httptest.Server {
	tb.Helper()
	h := handler()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

// leanTransport is the transport of every raw side: net/http's default,
// with the idle pool the SDKs are measured with. Each side gets its own, so
// no side warms another's connections.
func leanTransport(tb testing.TB) *http.Transport {
	tb.Helper()
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	tb.Cleanup(t.CloseIdleConnections)
	return t
}
