"use strict";
// A local managed-identity endpoint in App Service's shape, and the check
// that lets the server accept its tokens and no others.
//
// App Service gives a process IDENTITY_ENDPOINT and IDENTITY_HEADER; azidentity's
// ManagedIdentityCredential (and DefaultAzureCredential, through it) then asks
//   GET $IDENTITY_ENDPOINT?api-version=2019-08-01&resource=<audience>
//   X-IDENTITY-HEADER: $IDENTITY_HEADER
// and reads {"access_token", "expires_on" (unix seconds), "resource",
// "token_type"}. Tokens here are JWTs signed with a key made at start
// (HS256), so only this process can mint one the server accepts; the Cosmos
// SDKs send them as "Authorization: type=aad&ver=1.0&sig=<token>".

const crypto = require("crypto");
const http = require("http");

const TOKEN_LIFETIME_S = 3600;
const API_VERSION = "2019-08-01";

function b64url(buf) {
  return Buffer.from(buf).toString("base64url");
}

class Identity {
  constructor() {
    this.key = crypto.randomBytes(32);
    this.header = crypto.randomBytes(16).toString("hex"); // IDENTITY_HEADER
    this.principal = crypto.randomUUID();
    this.issued = 0;
  }

  sign(payload) {
    const head = b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
    const body = b64url(JSON.stringify(payload));
    const sig = b64url(crypto.createHmac("sha256", this.key).update(`${head}.${body}`).digest());
    return `${head}.${body}.${sig}`;
  }

  // mint is a token for resource (an audience URL) that expires in an hour.
  mint(resource) {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + TOKEN_LIFETIME_S;
    this.issued += 1;
    return {
      access_token: this.sign({ aud: resource, iss: "cosmos-test-server", oid: this.principal, iat: now, nbf: now, exp }),
      expires_on: String(exp),
      resource,
      token_type: "Bearer",
      client_id: this.principal
    };
  }

  // verify says why token is not one this process minted and still valid,
  // or "" when it is.
  verify(token) {
    const parts = String(token).split(".");
    if (parts.length !== 3) return "the token is not a JWT";
    const want = crypto.createHmac("sha256", this.key).update(`${parts[0]}.${parts[1]}`).digest();
    const got = Buffer.from(parts[2], "base64url");
    if (got.length !== want.length || !crypto.timingSafeEqual(got, want)) {
      return "the token was not issued by this server's identity endpoint";
    }
    let payload;
    try {
      payload = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    } catch (err) {
      return "the token's payload is not JSON";
    }
    if (!(payload.exp > Date.now() / 1000)) return "the token has expired";
    return "";
  }

  // handle answers the identity endpoint's requests.
  handle(req, res) {
    const url = new URL(req.url, "http://127.0.0.1");
    const reply = (status, body) => {
      res.statusCode = status;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(body));
    };
    if (req.method !== "GET" || url.pathname !== "/msi/token") {
      return reply(404, { error: "not_found", error_description: "GET /msi/token only" });
    }
    if (req.headers["x-identity-header"] !== this.header) {
      return reply(401, { error: "unauthorized", error_description: "X-IDENTITY-HEADER is missing or wrong" });
    }
    const resource = url.searchParams.get("resource");
    if (!resource) return reply(400, { error: "invalid_request", error_description: "resource is required" });
    if (url.searchParams.get("api-version") !== API_VERSION) {
      return reply(400, { error: "invalid_request", error_description: `api-version must be ${API_VERSION}` });
    }
    return reply(200, this.mint(resource));
  }

  // listen serves the endpoint on host:port (0: a free one) and calls ready
  // with its URL.
  listen(port, host, ready) {
    const server = http.createServer((req, res) => this.handle(req, res));
    server.on("error", err => {
      console.error(`cosmos-test-server: identity endpoint: ${err.message}`);
      process.exit(1);
    });
    server.listen(port, host, () => ready(`http://${host}:${server.address().port}/msi/token`));
    return server;
  }
}

// authFailure says why the request's Authorization is refused, or "" when
// it passes: a key signature (type=master) is accepted as before, the
// server checks none; an AAD token (type=aad) only when identity minted it.
function authFailure(req, identity) {
  const raw = req.headers.authorization;
  if (!raw) return "";
  let auth = String(raw);
  try {
    auth = decodeURIComponent(auth);
  } catch (err) {
    // not percent-encoded: read as is
  }
  const fields = new URLSearchParams(auth.replace(/\+/g, "%2B"));
  if (fields.get("type") !== "aad") return "";
  if (!identity) return "AAD tokens are accepted only when the server runs its identity endpoint (--identity-port)";
  return identity.verify(fields.get("sig") || "");
}

module.exports = { Identity, authFailure };
