package main

import (
	"context"
	"slices"
	"time"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// Completion of the values operators look up elsewhere otherwise: profile
// names (from the config file, and the built-in sandbox), terminal ids
// and bank codes (asked of the service with the credentials the command
// line would use, within a few seconds, nothing on failure).

// completionTimeout bounds a completion's call to the service: a shell
// waiting on Tab must not hang.
const completionTimeout = 5 * time.Second

// completeProfiles completes --profile.
func completeProfiles(a *app) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		path, err := configPath(a.env.getenv)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, _, _ := readProfiles(path)
		if !slices.Contains(names, "sandbox") {
			names = append(names, "sandbox\tthe local sandbox at "+sandboxBaseURL)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFromService completes with what list reads from the service,
// with the credentials the command line would use, within
// completionTimeout; nothing on failure.
func completeFromService[T any](a *app, list func(*paykit.Client, context.Context) ([]T, error), item func(T) (string, bool)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		a.profileSet = cmd.Flags().Changed("profile")
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		all, err := read(ctx, a, list)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, v := range all {
			if s, ok := item(v); ok {
				out = append(out, s)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTerminals completes a terminal id, its name as the description.
func completeTerminals(a *app) cobra.CompletionFunc {
	return completeFromService(a, (*paykit.Client).ListTerminals, func(t paykit.Terminal) (string, bool) {
		return safeCell(t.ID) + "\t" + safeCell(t.Name), true
	})
}

// completeBanks completes the code of an active bank, its name as the
// description.
func completeBanks(a *app) cobra.CompletionFunc {
	return completeFromService(a, (*paykit.Client).ListBanks, func(b paykit.Bank) (string, bool) {
		return safeCell(b.Code) + "\t" + safeCell(b.Name), b.IsActive
	})
}

// registerCompletions wires the completions into the tree newRoot built.
func registerCompletions(a *app, root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("profile", completeProfiles(a))
	for _, path := range [][]string{{"transfers", "create"}, {"withdrawals", "create"}, {"payments", "create"}, {"payouts", "create"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			continue
		}
		for _, f := range []string{"from", "to", "terminal"} {
			if cmd.Flags().Lookup(f) != nil {
				_ = cmd.RegisterFlagCompletionFunc(f, completeTerminals(a))
			}
		}
		if cmd.Flags().Lookup("bank") != nil {
			_ = cmd.RegisterFlagCompletionFunc("bank", completeBanks(a))
		}
	}
}
