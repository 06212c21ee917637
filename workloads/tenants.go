package workloads

import (
	"fmt"
	"math"

	"github.com/kvcosim/kvcosim/sim"
)

// Tenant is one of a synthetic workload's tenants: its name, the share of
// the sessions that are its own, and its sessions' token lengths (its
// objectives are the scenario's, not the workload's).
type Tenant struct {
	Name                                string
	Share                               float64
	FirstPrompt, FollowUpPrompt, Output LengthFit
}

// ShareTolerance is how far the tenants' shares may sum from 1.
const ShareTolerance = 1e-9

// validateTenants checks each tenant's name, share and lengths, and that
// the shares sum to 1.
func validateTenants(tenants []Tenant) error {
	if len(tenants) == 0 {
		return nil
	}
	sum, seen := 0.0, map[string]int{}
	for i, t := range tenants {
		key := fmt.Sprintf("workload.tenants[%d]", i)
		if first, dup := seen[t.Name]; dup {
			return fmt.Errorf("%s.name: %q: each tenant needs a name of its own (tenant %d has it too)", key, t.Name, first)
		}
		if t.Name == "" {
			return fmt.Errorf("%s.name: each tenant needs a name", key)
		}
		seen[t.Name] = i
		if !(t.Share > 0 && t.Share <= 1) {
			return fmt.Errorf("%s.share = %v: must be in (0, 1]", key, t.Share)
		}
		sum += t.Share
		if err := checkFits(key+".", t.fits()); err != nil {
			return err
		}
	}
	if math.Abs(sum-1) > ShareTolerance {
		return fmt.Errorf("workload.tenants: the shares sum to %.12g: they must sum to 1 (within %g)", sum, ShareTolerance)
	}
	return nil
}

func (t Tenant) fits() []namedFit {
	return []namedFit{{"first_prompt_median_tokens", "first_prompt_p90_tokens", t.FirstPrompt},
		{"follow_up_median_tokens", "follow_up_p90_tokens", t.FollowUpPrompt},
		{"output_median_tokens", "output_p90_tokens", t.Output}}
}

// tenantDists are a tenant's token-length distributions.
type tenantDists struct {
	name                  string
	first, follow, output *sim.LogNormal
}

// tenantLengths are the distributions of each tenant, or of the workload's
// own lengths as its one nameless tenant.
func (c SyntheticConfig) tenantLengths() ([]tenantDists, error) {
	tenants := c.Tenants
	if len(tenants) == 0 {
		tenants = []Tenant{{Share: 1, FirstPrompt: c.FirstPrompt, FollowUpPrompt: c.FollowUpPrompt, Output: c.Output}}
	}
	out := make([]tenantDists, len(tenants))
	for i, t := range tenants {
		l := tenantDists{name: t.Name}
		for _, f := range []struct {
			d   **sim.LogNormal
			fit LengthFit
		}{{&l.first, t.FirstPrompt}, {&l.follow, t.FollowUpPrompt}, {&l.output, t.Output}} {
			d, err := sim.LogNormalFromMedianP90(f.fit.Median, f.fit.P90)
			if err != nil {
				return nil, err
			}
			*f.d = d
		}
		out[i] = l
	}
	return out, nil
}

// tenantOf draws a session's tenant by the shares (the only one when the
// workload has none, drawing nothing).
func (c SyntheticConfig) tenantOf(r *sim.Stream, all []tenantDists) *tenantDists {
	if len(c.Tenants) == 0 {
		return &all[0]
	}
	u, cum := r.Float64(), 0.0
	for i, t := range c.Tenants {
		if cum += t.Share; u < cum {
			return &all[i]
		}
	}
	return &all[len(all)-1]
}

// tenantTokens is TokensPerSession's share-weighted mean over the
// tenants.
func (c SyntheticConfig) tenantTokens() float64 {
	sum := 0.0
	for _, t := range c.Tenants {
		sum += t.Share * c.tokensWith(t.FirstPrompt, t.FollowUpPrompt, t.Output)
	}
	return sum
}
