// Package cosmos is the Cosmos DB implementation of store.Store, on the
// azcosmos SDK, reading and writing ARO-HCP's Resources container.
package cosmos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/store"
)

// Store implements store.Store on one database's Resources container.
type Store struct {
	client    *azcosmos.Client
	database  *azcosmos.DatabaseClient
	resources *azcosmos.ContainerClient
	cfg       Config
	now       func() time.Time
	log       *slog.Logger
	// httpClient is set when the store made its own transport; Close
	// releases its idle connections.
	httpClient *http.Client
	// perTry runs on every HTTP attempt (WithPerTryPolicy).
	perTry []policy.Policy
}

var _ store.Store = (*Store)(nil)

// Option adjusts a Store.
type Option func(*Store)

// WithClock sets the clock used for soft-delete timestamps and for hiding
// expired documents.
func WithClock(c clock.Clock) Option { return func(s *Store) { s.now = c.Now } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithPerTryPolicy adds a pipeline policy that sees every HTTP attempt,
// retries included; the benchmark counts the store's requests with it.
func WithPerTryPolicy(p policy.Policy) Option {
	return func(s *Store) { s.perTry = append(s.perTry, p) }
}

// New connects to the account in cfg. It does no I/O: the first request
// discovers the account's regions.
func New(cfg Config, opts ...Option) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, now: time.Now, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	var transport policy.Transporter
	hc, err := cfg.httpClient()
	if err != nil {
		return nil, err
	}
	if s.httpClient = hc; hc != nil {
		transport = hc
	}
	clientOpts := &azcosmos.ClientOptions{
		EnableContentResponseOnWrite: true, // Items carry the stored body
		ClientOptions: azcore.ClientOptions{
			Retry:            cfg.retryOptions(),
			PerCallPolicies:  []policy.Policy{unavailableRetry{opts: cfg.retryOptions()}},
			PerRetryPolicies: append([]policy.Policy{untrustedStop{}}, s.perTry...),
			Transport:        transport,
		},
	}
	if cfg.Key != "" {
		var cred azcosmos.KeyCredential
		cred, err = azcosmos.NewKeyCredential(cfg.Key)
		if err != nil {
			return nil, fmt.Errorf("setting %s: AccountKey is not a valid base64 key", SettingConnectionString)
		}
		s.client, err = azcosmos.NewClientWithKey(cfg.Endpoint, cred, clientOpts)
	} else {
		cred, credErr := cfg.tokenCredential()
		if credErr != nil {
			return nil, credErr
		}
		s.client, err = azcosmos.NewClient(cfg.Endpoint, cred, clientOpts)
	}
	if err != nil {
		return nil, fmt.Errorf("creating Cosmos client for %s: %w", cfg.Endpoint, err)
	}
	if s.database, err = s.client.NewDatabase(cfg.Database); err != nil {
		return nil, fmt.Errorf("opening database %s: %w", cfg.Database, err)
	}
	if s.resources, err = s.database.NewContainer(ResourcesContainer); err != nil {
		return nil, fmt.Errorf("opening container %s: %w", ResourcesContainer, err)
	}
	return s, nil
}

// retryOptions bounds azcore's retries of throttling (429, never executed by
// the service, so safe for writes too); unavailableRetry reuses the same
// bound for 503 on reads. Other statuses are answers, not retried.
func (c Config) retryOptions() policy.RetryOptions {
	opts := policy.RetryOptions{
		MaxRetries:    c.MaxRetries,
		RetryDelay:    c.RetryDelay,
		MaxRetryDelay: c.MaxRetryDelay,
		StatusCodes:   []int{http.StatusTooManyRequests},
	}
	switch {
	case opts.MaxRetries == 0:
		opts.MaxRetries = DefaultMaxRetries
	case opts.MaxRetries < 0:
		opts.MaxRetries = -1
	}
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = DefaultRetryDelay
	}
	if opts.MaxRetryDelay <= 0 {
		opts.MaxRetryDelay = DefaultMaxRetryDelay
	}
	return opts
}

// Close releases the client's shared caches and idle connections.
func (s *Store) Close() error {
	s.client.Close()
	if s.httpClient != nil {
		s.httpClient.CloseIdleConnections()
	}
	return nil
}

// Get is a point read; soft-deleted and expired documents are ErrNotFound.
func (s *Store) Get(ctx context.Context, partitionKey, id string) (store.Item, error) {
	if err := checkPartitionKey(partitionKey); err != nil {
		return store.Item{}, err
	}
	if err := checkID(id); err != nil {
		return store.Item{}, err
	}
	resp, err := s.resources.ReadItem(ctx, azcosmos.NewPartitionKeyString(partitionKey), id, nil)
	if err != nil {
		return store.Item{}, mapError(err, "reading document %s/%s", partitionKey, id)
	}
	m, err := readMeta(resp.Value)
	if err != nil {
		return store.Item{}, fmt.Errorf("reading document %s/%s: %w", store.KeyLabel(partitionKey), id, err)
	}
	if !m.visible(s.now()) {
		return store.Item{}, fmt.Errorf("reading document %s/%s: %w (soft-deleted or expired)", store.KeyLabel(partitionKey), id, store.ErrNotFound)
	}
	return store.Item{Body: resp.Value, ETag: string(resp.ETag)}, nil
}

// Create writes a new document; ErrConflict if the id is taken.
func (s *Store) Create(ctx context.Context, partitionKey string, doc []byte) (store.Item, error) {
	id, err := checkDocument(doc, partitionKey)
	if err != nil {
		return store.Item{}, fmt.Errorf("creating document in %s: %w", store.KeyLabel(partitionKey), err)
	}
	resp, err := s.resources.CreateItem(ctx, azcosmos.NewPartitionKeyString(partitionKey), doc,
		&azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		return store.Item{}, mapError(err, "creating document %s/%s", partitionKey, id)
	}
	return store.Item{Body: resp.Value, ETag: string(resp.ETag)}, nil
}

// Replace overwrites a document whose etag still equals ifMatch.
func (s *Store) Replace(ctx context.Context, partitionKey, id string, doc []byte, ifMatch string) (store.Item, error) {
	if ifMatch == "" {
		return store.Item{}, fmt.Errorf("replacing document %s/%s: %w: ifMatch etag is empty", store.KeyLabel(partitionKey), id, store.ErrInvalid)
	}
	bodyID, err := checkDocument(doc, partitionKey)
	if err != nil {
		return store.Item{}, fmt.Errorf("replacing document %s/%s: %w", store.KeyLabel(partitionKey), id, err)
	}
	if bodyID != id {
		return store.Item{}, fmt.Errorf("replacing document %s/%s: %w: body field id is %q", store.KeyLabel(partitionKey), id, store.ErrInvalid, bodyID)
	}
	etag := azcore.ETag(ifMatch)
	resp, err := s.resources.ReplaceItem(ctx, azcosmos.NewPartitionKeyString(partitionKey), id, doc,
		&azcosmos.ItemOptions{IfMatchEtag: &etag, EnableContentResponseOnWrite: true})
	if err != nil {
		return store.Item{}, mapError(err, "replacing document %s/%s", partitionKey, id)
	}
	return store.Item{Body: resp.Value, ETag: string(resp.ETag)}, nil
}

// SoftDelete marks a document deleted the way ARO-HCP does, with If-Match
// on the etag just read; a concurrent writer makes it ErrPreconditionFailed.
func (s *Store) SoftDelete(ctx context.Context, partitionKey, id string) error {
	item, err := s.Get(ctx, partitionKey, id)
	if err != nil {
		return fmt.Errorf("soft-deleting: %w", err)
	}
	body, err := markDeleted(item.Body, s.now())
	if err != nil {
		return fmt.Errorf("soft-deleting document %s/%s: %w", store.KeyLabel(partitionKey), id, err)
	}
	if _, err := s.Replace(ctx, partitionKey, id, body, item.ETag); err != nil {
		return fmt.Errorf("soft-deleting: %w", err)
	}
	return nil
}

// DropDatabase deletes the store's database; tests use it to clean up.
func (s *Store) DropDatabase(ctx context.Context) error {
	_, err := s.database.Delete(ctx, nil)
	if err != nil && !errors.Is(mapError(err, ""), store.ErrNotFound) {
		return mapError(err, "deleting database %s", s.cfg.Database)
	}
	return nil
}

func ignoreConflict(err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusConflict {
		return nil
	}
	return err
}
