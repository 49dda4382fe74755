package evalset_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/skillhost/skillhost/internal/evalset"
)

func ExampleEvaluate() {
	catalog, err := evalset.LoadCatalog(strings.NewReader(`{"name":"slack_post_message","description":"Post to a channel."}
{"name":"send_email","description":"Send an email now."}
`))
	if err != nil {
		panic(err)
	}
	queries, err := evalset.LoadQueries(strings.NewReader(`{"query":"ping the team in #eng","expected":["slack_post_message"]}
{"query":"mail the report to finance","expected":["send_email"]}
`))
	if err != nil {
		panic(err)
	}
	if err := evalset.Validate(catalog, queries); err != nil {
		panic(err)
	}
	// A stand-in search that always ranks the catalog in file order.
	search := func(ctx context.Context, query string, limit int) ([]string, error) {
		return []string{"slack_post_message", "send_email"}, nil
	}
	m, err := evalset.Evaluate(context.Background(), queries, search)
	if err != nil {
		panic(err)
	}
	fmt.Printf("n=%d recall@1=%.2f recall@5=%.2f mrr@10=%.2f\n", m.N, m.RecallAt1, m.RecallAt5, m.MRRAt10)
	// Output: n=2 recall@1=0.50 recall@5=1.00 mrr@10=0.75
}
