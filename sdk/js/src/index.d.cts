// Generated from index.d.ts by scripts/build-cjs.mjs (npm run build): do not edit.
// Types of the service's JavaScript SDK (src/index.js).
//
// They compile with or without the DOM lib ("lib": ["ES2022"] in a Node
// project): what the SDK touches of the DOM and of fetch is typed by its
// shape (RenderTarget, DocumentLike, FetchLike), which DOM elements,
// documents and fetch all have.

/** The global type Name (MouseEvent, AbortSignal, …) where a lib declares it, else Fallback. */
type GlobalOr<Name extends string, Fallback> =
  typeof globalThis extends { [K in Name]: { prototype: infer T } } ? T : Fallback;

export declare const VERSION: string;

/** Most events the service accepts in one batch request. */
export declare const MAX_BATCH: 100;

/** An async key-value store: React Native's AsyncStorage has this shape. */
export interface AsyncStorageLike {
  getItem(key: string): Promise<string | null>;
  setItem(key: string, value: string): Promise<void>;
  removeItem(key: string): Promise<void>;
}

/** Why queued events were dropped. */
export type DropReason = 'queue_full' | 'rejected';

export interface ClientOptions {
  /** A client key (sk_c_…) of the app. */
  key: string;
  appId: number;
  /** Sent with form submissions and part of the storage namespace. Default "production". */
  environment?: string;
  /**
   * The service's URL, with or without the API version: "https://ab.example.com" and
   * "https://ab.example.com/v1" are the same. Default "http://localhost:8080/v1".
   */
  baseUrl?: string;
  /** Default: localStorage in browsers, else an in-memory store. */
  storage?: AsyncStorageLike;
  /** A session id to use instead of the generated, stored one. */
  sessionId?: string;
  /** Milliseconds between background event sends; 0 turns them off. Default 5000. */
  flushInterval?: number;
  /** Events per batch request, at most 100. Default 100. */
  maxBatchSize?: number;
  /** Queued events kept at most; the oldest beyond are dropped (onDrop). Default 1000. */
  maxQueueSize?: number;
  /** Retries of a failed flush() before it gives up for now. Default 5. */
  maxRetries?: number;
  /**
   * Most milliseconds flush() and close() take, retries included; what is not sent by then
   * stays queued and stored. Infinity for no bound. Default 5000.
   */
  flushTimeout?: number;
  /** First retry delay in ms; doubles each retry, with jitter. Default 500. */
  retryBase?: number;
  /** Cap of a retry delay in ms. Default 30000. */
  retryMax?: number;
  /** Request timeout in ms. Default 10000. */
  timeout?: number;
  /** Replaces the global fetch (tests, custom transports); fetch itself fits. */
  fetch?: FetchLike;
  /** Replaces Math.random for the retry jitter. */
  random?: () => number;
  /** Told of every failure the app did not await: background sends, storage, fallbacks. */
  onError?: (error: ServiceError) => void;
  /** Told of events that will never be sent, and why. */
  onDrop?: (events: QueuedEvent[], reason: DropReason, error?: ServiceError) => void;
  /**
   * "local": download the app's ruleset, keep it current through its stream, and answer
   * getVariant for local campaigns in process, without the network; remote campaigns still
   * ask the server. Default "remote": every variant is asked of the server.
   */
  evaluation?: 'local' | 'remote';
  /** Local mode: a ruleset to start from without a request (server-side rendering). */
  bootstrap?: Ruleset;
  /** Local mode: false neither follows the stream nor downloads again. Default true. */
  stream?: boolean;
  /** Local mode without a streaming fetch: milliseconds between downloads. Default 30000. */
  pollInterval?: number;
}

/** An attribute rule of an audience; the ruleset's local campaigns have only these. */
export interface AttributeRule {
  ruleType?: 'attribute';
  field: string;
  operator: 'equals' | 'not_equals' | 'contains' | 'not_contains' | 'starts_with' | 'ends_with'
    | 'greater_than' | 'greater_than_or_equal' | 'less_than' | 'less_than_or_equal'
    | 'in' | 'not_in' | 'exists' | 'not_exists';
  value?: string | number | boolean | Array<string | number | boolean>;
}

/** An audience's definition; rules on events make a campaign remote. */
export interface AudienceDefinition {
  logic?: 'AND' | 'OR';
  rules: Array<AttributeRule | { ruleType: 'event'; [field: string]: unknown }>;
}

export interface RulesetVariant {
  id: number;
  name: string;
  trafficAllocation: number;
  contentViewId: number | null;
  isControl: boolean;
}

/** One active campaign of a ruleset. */
export interface RulesetCampaign {
  id: number;
  key: string;
  /** "remote": round robin, or rules on events; only the server evaluates it. */
  evaluation: 'local' | 'remote';
  assignmentType: 'weighted' | 'round_robin';
  namespace: { id: string; range: [number, number] } | null;
  audience: AudienceDefinition | null;
  variants: RulesetVariant[];
}

/** The app's ruleset: GET /apps-external/{appId}/ruleset. */
export interface Ruleset {
  version: string;
  campaigns: RulesetCampaign[];
  /** The published content blocks the variants show. */
  contentViews?: ContentView[];
}

/** A visitor as local evaluation reads it. */
export interface Visitor {
  userId?: string | null;
  sessionId?: string | null;
  attributes?: Record<string, unknown> | null;
}

/** A ruleset campaign prepared by compileCampaign. */
export interface CompiledCampaign {
  readonly id: number;
  readonly key: string;
  /** Whether this SDK evaluates it; false: only the server does. */
  readonly local: boolean;
  readonly entry: RulesetCampaign;
}

/** evaluateCampaign's answer. */
export type LocalEvaluation = { variant: RulesetVariant; reason?: undefined } | { variant?: undefined; reason: 'not_in_namespace' | 'not_in_audience' };

/** What the SDK passes to fetch. */
export interface FetchInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  keepalive?: boolean;
  /** Aborts the request at its timeout. */
  signal?: GlobalOr<'AbortSignal', unknown>;
}

/** What the SDK reads of fetch's answer; a fetch Response has it. */
export interface FetchResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
  /** The streaming body, read by local mode's stream where fetch has one. */
  readonly body?: { getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }> } } | null;
}

/** A fetch: the global one, or a replacement. */
export type FetchLike = (url: string, init: FetchInit) => Promise<FetchResponseLike>;

/** An error from the service, or from the SDK itself (status 0). */
export declare class ServiceError extends Error {
  constructor(code: string, message: string, init?: { status?: number; details?: Record<string, unknown>; retryAfter?: number; cause?: unknown });
  readonly name: 'ServiceError';
  /** The service's code (INVALID_REQUEST, NOT_FOUND, RATE_LIMIT_EXCEEDED, …) or NETWORK_ERROR, TIMEOUT, INVALID_ARGUMENT, CLIENT_CLOSED, STORAGE_ERROR, EVENTS_DROPPED. */
  code: string;
  /** The HTTP status; 0 when no answer came. */
  status: number;
  /** The service's details, e.g. { fields: { "data.email": "is required" } }. */
  details: Record<string, any>;
  /** Milliseconds the service asked to wait (429). */
  retryAfter?: number;
  /** Whether the same request may succeed later. */
  readonly retryable: boolean;
}

export type ContentItem =
  | { type: 'text'; content: string; styles?: Record<string, string | number> }
  | { type: 'heading'; content: string; styles?: Record<string, string | number> }
  | { type: 'image'; url: string; alt?: string; styles?: Record<string, string | number> }
  | { type: 'button'; label: string; url?: string; styles?: Record<string, string | number> }
  | { type: 'form'; fields: FormField[]; submitLabel?: string; successMessage?: string; styles?: Record<string, string | number> };

export interface FormField {
  name: string;
  type: 'text' | 'email' | 'number' | 'textarea' | 'checkbox' | 'select';
  label?: string;
  required?: boolean;
  options?: string[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

export type ContentStatus = 'draft' | 'published' | 'archived';

/** A content block as a variant answer carries it. */
export interface ContentView {
  id: number;
  name: string;
  status: ContentStatus;
  items: ContentItem[];
}

/** A content block as getContent answers it (always published there). */
export interface ContentBlock extends ContentView {
  appId: number;
  /** When the block last entered `published` (ISO 8601). */
  publishedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AssignedVariant {
  campaignId: number;
  variantId: number;
  variantName: string;
  contentViewId: number;
  /** null while the variant's block is not published: show nothing for it. */
  contentView: ContentView | null;
  impressionRecorded: boolean;
}

export interface UnassignedVariant {
  campaignId: number;
  variantId: null;
  reason: 'campaign_not_active' | 'not_in_audience' | 'not_in_namespace' | (string & {});
}

export type VariantAnswer = AssignedVariant | UnassignedVariant;

/** getVariants' answer: the user's variant in every active campaign that applies. */
export interface VariantList {
  data: AssignedVariant[];
}

/** A user's profile, as identify answers it. */
export interface Profile {
  userId: string;
  /** Every attribute of the user, after the merge. */
  attributes: Record<string, unknown>;
  /** The first sighting of the user (ISO 8601). */
  firstSeen: string;
  /** When the attributes last changed, or a later sighting (ISO 8601; may lag by a minute). */
  lastSeen: string;
}

export interface UserOptions {
  userId?: string;
  /** Default: the client's session id. */
  sessionId?: string;
}

export interface VariantOptions extends UserOptions {
  attributes?: Record<string, unknown>;
}

export interface TrackOptions extends UserOptions {
  metadata?: Record<string, unknown>;
  /** Idempotency key; generated when not given. */
  logId?: string;
}

export interface TrackResult {
  /** The event's idempotency key: the one given, or a generated one. */
  logId: string;
}

export interface QueuedEvent {
  eventId: string;
  logId: string;
  userId?: string;
  sessionId?: string;
  metadata?: Record<string, unknown>;
}

export interface FlushResult {
  /** Events the service stored (or had already stored). */
  sent: number;
  /** Events refused and dropped (see onDrop). */
  dropped: number;
  /** Events still queued (and stored) after a failure that may pass later. */
  pending: number;
}

export interface FormSubmission {
  success: true;
  formSubmissionId: number;
  submittedAt: string;
}

/** The parts of a DOM element that renderContent uses; every DOM Element has them. */
export interface RenderTarget {
  readonly firstChild: unknown;
  appendChild(node: never): unknown;
  removeChild(node: never): unknown;
  readonly ownerDocument?: DocumentLike | null;
}

/** The part of a DOM document that renderContent uses. */
export interface DocumentLike {
  createElement(tagName: string): unknown;
}

/** A button's click: the DOM's MouseEvent where the DOM lib is loaded. */
export type ButtonClick = GlobalOr<'MouseEvent', { readonly type: string; preventDefault(): void }>;

export interface RenderOptions {
  client?: Client;
  userId?: string;
  sessionId?: string;
  /** For an items array, the block whose form is submitted. */
  contentViewId?: number;
  /** Default: the element's ownerDocument, else the global document. */
  document?: DocumentLike;
  onSubmit?: (answer: FormSubmission) => void;
  onButtonClick?: (item: ContentItem, event: ButtonClick) => void;
}

/**
 * What renderContent accepts: a content block, a variant answer, or items;
 * null (the contentView of a variant whose block is not published) renders nothing.
 */
export type Renderable = ContentView | AssignedVariant | ContentItem[] | null;

export interface Client {
  readonly appId: number;
  readonly environment: string;
  /** The API base in use, always ending in /v1. */
  readonly baseUrl: string;
  /** The session id in use, once the client has loaded it (after the first call). */
  readonly sessionId: string | null;
  readonly queueSize: number;
  /** The user's variant in a campaign, named by its id or by its key (such as "hero-test"). */
  getVariant(campaign: number | string, options?: VariantOptions): Promise<VariantAnswer>;
  /**
   * Local mode: the answer getVariant would give, at once, when the ruleset holds the campaign
   * as a local one; null otherwise.
   */
  getVariantSync(campaign: number | string, options?: VariantOptions): VariantAnswer | null;
  /** Local mode: the ruleset in use (what bootstrap takes), null until it is in. */
  readonly ruleset: Ruleset | null;
  /** Local mode: settles once the first ruleset is in, or its first download failed. */
  ready(): Promise<void>;
  /** Calls listener on each new ruleset; answers the function that stops it. */
  onRulesetChange(listener: (ruleset: Ruleset) => void): () => void;
  /** Local mode: exposures waiting for the next batch. */
  readonly exposureQueueSize: number;
  getVariants(options?: VariantOptions): Promise<VariantList>;
  /**
   * Merges attributes into the user's profile and links the client's session to the user; a
   * session linked to another user rejects with a ServiceError of code SESSION_LINKED (409).
   */
  identify(userId: string, attributes?: Record<string, unknown>): Promise<Profile>;
  track(eventId: string, options?: TrackOptions): Promise<TrackResult>;
  getContent(contentViewId: number): Promise<ContentBlock>;
  submitForm(contentViewId: number, data: Record<string, unknown>, options?: UserOptions): Promise<FormSubmission>;
  /** Sends the queue, within flushTimeout; never rejects. */
  flush(): Promise<FlushResult>;
  /** Stops the client after a last send within flushTimeout; what is left stays in storage. Never rejects. */
  close(): Promise<FlushResult>;
  renderContent<E extends RenderTarget>(block: Renderable, element: E, options?: Omit<RenderOptions, 'client'>): E;
}

export declare function createClient(options: ClientOptions): Client;
export declare function memoryStorage(): AsyncStorageLike;
export declare function backoffDelay(attempt: number, base?: number, max?: number, random?: () => number): number;
export declare function renderContent<E extends RenderTarget>(block: Renderable, element: E, options?: RenderOptions): E;
/** Prepares a ruleset's campaign for evaluateCampaign. */
export declare function compileCampaign(entry: RulesetCampaign): CompiledCampaign;
/** Evaluates a compiled local campaign for a visitor as the server's first assignment would. */
export declare function evaluateCampaign(campaign: CompiledCampaign, visitor: Visitor): LocalEvaluation;
/** GrowthBook's hash version 2 times 10000: the bucket of userKey under seed ("<campaignId>:"). */
export declare function hashBucket(seed: string, userKey: string): number;
/** Whether userKey falls in [start, end) of namespace id, as GrowthBook decides it. */
export declare function inNamespace(id: string, userKey: string, start: number, end: number): boolean;
