/**
 * Credentials limited to the objects under one key prefix of the storage root, as credential
 * vending hands them to other engines. The context carries a vendor through this seam without
 * knowing how it issues them (StsTableCredentials in lib/auth/credentials.ts: STS AssumeRole).
 */

export interface AwsTempCredentials {
  access_key_id: string;
  secret_access_key: string;
  session_token: string;
}

/** Credentials of one vended session, and when they expire (epoch milliseconds). */
export interface VendedCredentials {
  credentials: AwsTempCredentials;
  expirationTime: number;
}

/**
 * Issues credentials limited to the objects under one key prefix of the storage root, on behalf
 * of `principal` (recorded with the session for audit).
 */
export interface TableCredentialVendor {
  /** READ: get and list the objects under the prefix. */
  readCredentials(prefix: string, principal: string): Promise<VendedCredentials>;
  /**
   * READ_WRITE: also put objects there (never delete them). Absent where the deployment has no
   * role for it (SILT_TABLE_WRITE_ROLE_ARN).
   */
  readonly readWriteCredentials?: (prefix: string, principal: string) => Promise<VendedCredentials>;
}
