package cosmos

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
)

// ErrMissing: the database or one of its containers does not exist.
var ErrMissing = errors.New("missing from the Cosmos DB account")

// noDefaultExpiry is defaultTtl -1: TTL on, documents expire by their own
// ttl (operations after 7 days, soft-deleted documents after theirs).
const noDefaultExpiry = int32(-1)

// wantContainers are the containers as ARO-HCP deploys Resources
// (rp-cosmos.bicep) and as the Functions trigger wants its leases.
var wantContainers = []azcosmos.ContainerProperties{
	{
		ID: ResourcesContainer,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{
			Paths: []string{"/partitionKey"}, Kind: azcosmos.PartitionKeyKindHash, Version: 2,
		},
		DefaultTimeToLive: new(noDefaultExpiry),
	},
	{
		ID: LeasesContainer,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{
			Paths: []string{"/id"}, Kind: azcosmos.PartitionKeyKindHash, Version: 2,
		},
	},
}

// CheckContainers reads the database and its containers and says what is
// missing (ErrMissing) or shaped otherwise than upstream deploys it: a
// partition key other than the contract's, or TTL off on Resources (its
// operations would never expire). It creates nothing.
func (s *Store) CheckContainers(ctx context.Context) error {
	if _, err := s.database.Read(ctx, nil); err != nil {
		if errors.Is(mapError(err, ""), store.ErrNotFound) {
			return fmt.Errorf("database %s at %s: %w", s.cfg.Database, s.cfg.Endpoint, ErrMissing)
		}
		return mapError(err, "reading database %s at %s", s.cfg.Database, s.cfg.Endpoint)
	}
	for _, want := range wantContainers {
		c, err := s.database.NewContainer(want.ID)
		if err != nil {
			return fmt.Errorf("opening container %s: %w", want.ID, err)
		}
		resp, err := c.Read(ctx, nil)
		if err != nil {
			if errors.Is(mapError(err, ""), store.ErrNotFound) {
				return fmt.Errorf("container %s in database %s at %s: %w", want.ID, s.cfg.Database, s.cfg.Endpoint, ErrMissing)
			}
			return mapError(err, "reading container %s in %s", want.ID, s.cfg.Database)
		}
		if err := checkShape(want, resp.ContainerProperties); err != nil {
			return fmt.Errorf("container %s in database %s at %s: %w", want.ID, s.cfg.Database, s.cfg.Endpoint, err)
		}
	}
	return nil
}

func checkShape(want azcosmos.ContainerProperties, got *azcosmos.ContainerProperties) error {
	if got == nil {
		return errors.New("no properties in the answer")
	}
	if !slices.Equal(got.PartitionKeyDefinition.Paths, want.PartitionKeyDefinition.Paths) {
		return fmt.Errorf("partitioned on %v, want %v", got.PartitionKeyDefinition.Paths, want.PartitionKeyDefinition.Paths)
	}
	if want.DefaultTimeToLive != nil && (got.DefaultTimeToLive == nil || *got.DefaultTimeToLive != *want.DefaultTimeToLive) {
		have := "off"
		if got.DefaultTimeToLive != nil {
			have = fmt.Sprint(*got.DefaultTimeToLive)
		}
		return fmt.Errorf("defaultTtl is %s, want %d (TTL on, no default expiry: documents expire by their own ttl)", have, *want.DefaultTimeToLive)
	}
	return nil
}

// EnsureContainers creates the database and whichever of Resources
// (/partitionKey, defaultTtl -1) and leases (/id) is missing, then checks
// them all: an existing container of another shape is an error, never
// changed. Dev against a loopback endpoint and the tests use it;
// production infrastructure creates them itself (deploy/main.bicep).
func (s *Store) EnsureContainers(ctx context.Context) error {
	_, err := s.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: s.cfg.Database}, nil)
	if err = ignoreConflict(err); err != nil {
		return mapError(err, "creating database %s", s.cfg.Database)
	}
	for _, props := range wantContainers {
		_, err := s.database.CreateContainer(ctx, props, nil)
		if err = ignoreConflict(err); err != nil {
			return mapError(err, "creating container %s in %s", props.ID, s.cfg.Database)
		}
	}
	if err := s.CheckContainers(ctx); err != nil {
		return err
	}
	s.log.DebugContext(ctx, "cosmos containers ready", "database", s.cfg.Database)
	return nil
}
