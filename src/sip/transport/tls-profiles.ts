// The TLS material of each trunk (its CA bundle, its client certificate),
// kept as Node secure contexts so a connection does not rebuild them.

import { createSecureContext, type SecureContext } from 'node:tls';

/** A trunk's TLS material, PEM. Absent `ca`: the system's CAs. */
export interface TlsProfileMaterial {
  ca?: string;
  /** A client certificate (chain) and its key, for mutual TLS. */
  cert?: string;
  key?: string;
}

export class TlsProfiles {
  private readonly contexts = new Map<
    string,
    { material: TlsProfileMaterial; context: SecureContext }
  >();

  /** Registers a profile, or replaces it when its material changed (a
   *  context is built once per material); throws when the PEM does not load. */
  set(id: string, material: TlsProfileMaterial): void {
    const known = this.contexts.get(id);
    if (
      known &&
      known.material.ca === material.ca &&
      known.material.cert === material.cert &&
      known.material.key === material.key
    )
      return;
    const { ca, cert, key } = material;
    this.contexts.set(id, {
      material: { ca, cert, key },
      context: createSecureContext({ ca, cert, key }),
    });
  }

  delete(id: string): void {
    this.contexts.delete(id);
  }

  /** The context for a profile; undefined (system CAs) when it has none. */
  contextFor(id: string | undefined): SecureContext | undefined {
    return id === undefined ? undefined : this.contexts.get(id)?.context;
  }
}
