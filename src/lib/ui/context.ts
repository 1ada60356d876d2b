import { getContext, setContext } from 'svelte';
import type { HearthClient } from '$lib/client/hearth';

const KEY = Symbol('hearth-client');
export const setHearth = (client: HearthClient) => setContext(KEY, client);
export const getHearth = (): HearthClient => getContext(KEY);
