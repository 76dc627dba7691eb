"use strict";
// A certificate made at start: a CA of this run and a server certificate it
// signs for 127.0.0.1 and localhost, so any client that trusts the CA file
// (SSL_CERT_FILE, COSMOS_CA_FILE, NODE_EXTRA_CA_CERTS) verifies the server
// as it would a real account. Node has no API to issue certificates, so
// openssl (a Debian package, present wherever npm is) makes them.

const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

// makeCertificates writes ca.pem, server.pem and server-key.pem into dir
// (a fresh temporary directory when dir is empty, removed at exit) and
// returns their paths. The keys are P-256; the certificates last a week.
function makeCertificates(dir) {
  let owned = false;
  if (!dir) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "cosmos-test-server-tls-"));
    owned = true;
  }
  fs.mkdirSync(dir, { recursive: true });
  const file = name => path.join(dir, name);
  const openssl = args => {
    try {
      execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
    } catch (err) {
      const why = err.code === "ENOENT" ? "openssl is not installed" : String(err.stderr || err.message).trim();
      throw new Error(`making the TLS certificate: openssl ${args[0]}: ${why}`);
    }
  };
  const days = "7";
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("ca-key.pem")]);
  openssl(["req", "-x509", "-new", "-key", file("ca-key.pem"), "-sha256", "-days", days,
    "-subj", "/CN=cosmos-test-server local CA", "-addext", "basicConstraints=critical,CA:TRUE",
    "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-out", file("ca.pem")]);
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("server-key.pem")]);
  openssl(["req", "-new", "-key", file("server-key.pem"), "-subj", "/CN=127.0.0.1", "-out", file("server.csr")]);
  fs.writeFileSync(file("server.ext"), [
    "basicConstraints=critical,CA:FALSE",
    "keyUsage=critical,digitalSignature",
    "extendedKeyUsage=serverAuth",
    "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost"
  ].join("\n") + "\n");
  openssl(["x509", "-req", "-in", file("server.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca-key.pem"),
    "-CAcreateserial", "-days", days, "-sha256", "-extfile", file("server.ext"), "-out", file("server.pem")]);
  // The CA's key is of no further use: nothing else may be signed with it.
  fs.rmSync(file("ca-key.pem"), { force: true });
  if (owned) process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    caFile: file("ca.pem"),
    cert: fs.readFileSync(file("server.pem")),
    key: fs.readFileSync(file("server-key.pem"))
  };
}

module.exports = { makeCertificates };
