package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orbit-loop/orbit/hub"
)

func newCmdServeToken(f *Factory, serve *serveOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Make, list and revoke a hub's project tokens",
		Long: `A hub (orbit serve --store …) accepts its admin token and the tokens made
here: a push token pushes one project's journals and reads that project; a
read token reads one project, or every project with --project '*'. The hub
keeps a hash of each token, never the token: it is printed once.`,
		Example: `  orbit serve token create --store postgres://orbit@db/orbit --project k3x9… --scope push
  orbit serve token create --store sqlite:hub.db --project '*' --scope read --note dashboard
  orbit serve token list --store sqlite:hub.db
  orbit serve token revoke --store sqlite:hub.db 4f2a91c0d3e1`,
		Args: noArgs,
	}
	cmd.AddCommand(newCmdServeTokenCreate(f, serve, nil), newCmdServeTokenList(f, serve, nil), newCmdServeTokenRevoke(f, serve, nil))
	return cmd
}

type tokenOptions struct {
	f       *Factory
	serve   *serveOptions
	Project string
	Scope   string
	Note    string
	ID      string
	JSON    jsonFlag
}

// openHubStore opens the --store (or ORBIT_STORE) of a token command.
func (o *tokenOptions) openHubStore(ctx context.Context) (*hub.Store, error) {
	spec := o.serve.Store
	if spec == "" {
		spec = o.f.Getenv("ORBIT_STORE")
	}
	if spec == "" {
		return nil, flagErrorf("--store (or ORBIT_STORE) is required: the hub's store")
	}
	if _, _, err := hub.ParseSpec(spec); err != nil {
		return nil, flagErrorf("%v", err)
	}
	return hub.Open(ctx, spec, hub.Options{Conns: 1})
}
