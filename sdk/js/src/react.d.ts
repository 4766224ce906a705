// Declarations of service-sdk/react.
import type { ReactNode, ReactElement } from 'react';
import type { Client, VariantAnswer, VariantOptions, ServiceError } from './index.js';

export interface ServiceProviderProps {
  /** A client from createClient; evaluation: 'local' answers without the network. */
  client: Client;
  children?: ReactNode;
}

/** Gives the client to the useVariant hooks below it. */
export declare function ServiceProvider(props: ServiceProviderProps): ReactElement;

/** The provider's client. */
export declare function useServiceClient(): Client;

export interface VariantState {
  /** The answer; null while loading or after an error. */
  variant: VariantAnswer | null;
  loading: boolean;
  error: ServiceError | Error | null;
}

/** The user's variant in a campaign (its key or id); renders again when the ruleset changes it. */
export declare function useVariant(campaign: string | number, options?: VariantOptions): VariantState;
