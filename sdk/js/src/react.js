// React bindings of the SDK (service-sdk/react): a provider for a client
// and a hook for a campaign's variant. They use React's core only, no DOM,
// so they work in React Native, and React is the app's own (a peer
// dependency).
//
// This file is the source. react.cjs, for require(), is generated from it
// by scripts/build-cjs.mjs (`npm run build`).
import * as React from 'react';

const ClientContext = React.createContext(null);

/**
 * ServiceProvider gives its children's useVariant the client, made by
 * createClient (with evaluation: 'local', variants come without the
 * network once the ruleset is in, and follow its changes).
 */
export function ServiceProvider(props) {
  return React.createElement(ClientContext.Provider, { value: props.client }, props.children);
}

/** useServiceClient answers the provider's client. */
export function useServiceClient() {
  const client = React.useContext(ClientContext);
  if (!client) throw new Error('service-sdk/react: useVariant and useServiceClient need a <ServiceProvider client={…}> above them');
  return client;
}

// same tells whether two answers show the same thing, so that a new
// ruleset that does not change a variant does not render it again.
function same(a, b) {
  return a === b || (!!a && !!b && a.campaignId === b.campaignId && a.variantId === b.variantId
    && a.reason === b.reason && a.contentView === b.contentView);
}

// first answers the state before any request: in local mode with the
// ruleset in, the variant itself, so a server render (bootstrap) and the
// first render on a device show it at once.
function first(client, campaign, options) {
  try {
    const variant = typeof client.getVariantSync === 'function' ? client.getVariantSync(campaign, options) : null;
    return variant ? { variant, loading: false, error: null } : { variant: null, loading: true, error: null };
  } catch (error) {
    return { variant: null, loading: false, error };
  }
}

/**
 * useVariant answers {variant, loading, error} for a campaign (its key
 * or id) and the user of options ({userId, sessionId, attributes}). It
 * renders again when the answer comes, and when a new ruleset changes it.
 */
export function useVariant(campaign, options) {
  const client = useServiceClient();
  const opts = options || {};
  const attrs = JSON.stringify(opts.attributes ?? null);
  const [state, setState] = React.useState(() => first(client, campaign, opts));
  const [version, setVersion] = React.useState(() => client.ruleset?.version ?? null);
  React.useEffect(() => {
    if (typeof client.onRulesetChange !== 'function') return undefined;
    return client.onRulesetChange((rs) => setVersion(rs.version));
  }, [client]);
  React.useEffect(() => {
    let live = true;
    const ask = { userId: opts.userId, sessionId: opts.sessionId, attributes: JSON.parse(attrs) ?? undefined };
    Promise.resolve().then(() => client.getVariant(campaign, ask)).then(
      (variant) => {
        if (live) setState((s) => (!s.loading && !s.error && same(s.variant, variant) ? s : { variant, loading: false, error: null }));
      },
      (error) => {
        if (live) setState({ variant: null, loading: false, error });
      },
    );
    return () => { live = false; };
  }, [client, campaign, opts.userId, opts.sessionId, attrs, version]);
  return state;
}
