// Compiled by `tsc --noEmit -p tsconfig.json`: the README's React calls
// must type-check against the shipped declarations.
import { createElement } from 'react';
import { createClient } from '../src/index.js';
import { ServiceProvider, useVariant, useServiceClient, type VariantState } from '../src/react.js';

const client = createClient({ key: 'k', appId: 1, evaluation: 'local' });

export function Hero(): ReturnType<typeof createElement> | null {
  const { variant, loading, error }: VariantState = useVariant('hero-test', { userId: 'u1', attributes: { plan: 'pro' } });
  const c = useServiceClient();
  void c;
  if (loading || error || !variant || variant.variantId === null) return null;
  return createElement('h1', null, variant.variantName);
}

export const app = createElement(ServiceProvider, { client }, createElement(Hero));
