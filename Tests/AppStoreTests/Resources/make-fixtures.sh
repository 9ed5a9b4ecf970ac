#!/usr/bin/env bash
# Generates the committed fixtures in cli/ with the openssl CLI only, independently of the Swift
# TestPKI/JWSSigner: an App Store-shaped P-256 chain (root; intermediate with the Apple WWDR marker
# 1.2.840.113635.100.6.2.1; leaf with 1.2.840.113635.100.6.11.1, both non-critical DER NULL like
# Apple's) and compact JWS signed with `openssl dgst -sha256 -sign`, whose DER signature is
# converted to JOSE r||s here. Run once from any directory; commit the outputs.
#
#   cli/root.pem                  trust anchor for the tests
#   cli/valid.jws                 valid transaction (bundle com.example.cli, Sandbox)
#   cli/der-signature.jws         same signing input, DER-encoded ECDSA signature (must be rejected)
#   cli/leaf-without-oid.jws      chain whose leaf lacks 1.2.840.113635.100.6.11.1 (must be rejected)
#   cli/intermediate-without-oid.jws   chain whose intermediate lacks 1.2.840.113635.100.6.2.1
set -euo pipefail
cd "$(dirname "$0")"
rm -rf cli && mkdir cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/ext.cnf" <<'EOF'
[root]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[intermediate]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
1.2.840.113635.100.6.2.1 = DER:05:00
[intermediate_no_oid]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
1.2.840.113635.100.6.11.1 = DER:05:00
[leaf_no_oid]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF

days=36500
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/$1.key" 2>/dev/null; }
csr() { openssl req -new -key "$tmp/$1.key" -subj "/C=US/O=receiptd CLI fixtures/CN=$2" -out "$tmp/$1.csr"; }
# issue <name> <issuer> <extensions>
issue() {
  openssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/$2.pem" -CAkey "$tmp/$2.key" -set_serial "0x$(openssl rand -hex 8)" \
    -days "$days" -sha256 -extfile "$tmp/ext.cnf" -extensions "$3" -out "$tmp/$1.pem" 2>/dev/null
}
b64() { openssl x509 -in "$tmp/$1.pem" -outform DER | base64 -w0; }
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }

key root; csr root "CLI Root CA"
openssl x509 -req -in "$tmp/root.csr" -signkey "$tmp/root.key" -set_serial 1 -days "$days" -sha256 \
  -extfile "$tmp/ext.cnf" -extensions root -out "$tmp/root.pem" 2>/dev/null
key intermediate; csr intermediate "CLI Intermediate CA"; issue intermediate root intermediate
key intermediate_no_oid; csr intermediate_no_oid "CLI Intermediate CA without OID"; issue intermediate_no_oid root intermediate_no_oid
key leaf; csr leaf "CLI StoreKit Signing"; issue leaf intermediate leaf
key leaf_no_oid; csr leaf_no_oid "CLI StoreKit Signing without OID"; issue leaf_no_oid intermediate leaf_no_oid
key leaf_under_no_oid; csr leaf_under_no_oid "CLI StoreKit Signing under intermediate without OID"
issue leaf_under_no_oid intermediate_no_oid leaf
cp "$tmp/root.pem" cli/root.pem

signed_date=$(( ($(date +%s) + 60) * 1000 ))
payload=$(printf '{"transactionId":"3000000000000001","originalTransactionId":"3000000000000001","bundleId":"com.example.cli","productId":"com.example.cli.lifetime","purchaseDate":%s,"quantity":1,"type":"Non-Consumable","inAppOwnershipType":"PURCHASED","signedDate":%s,"environment":"Sandbox","transactionReason":"PURCHASE","storefront":"FRA","price":4990,"currency":"EUR"}' "$signed_date" "$signed_date")

# jws <leaf> <intermediate> [der]
jws() {
  local header input
  header=$(printf '{"alg":"ES256","x5c":["%s","%s","%s"]}' "$(b64 "$1")" "$(b64 "$2")" "$(b64 root)" | b64url)
  input="$header.$(printf '%s' "$payload" | b64url)"
  printf '%s' "$input" | openssl dgst -sha256 -sign "$tmp/$1.key" -out "$tmp/sig.der"
  if [ "${3:-}" = der ]; then
    printf '%s.%s\n' "$input" "$(b64url < "$tmp/sig.der")"
    return
  fi
  local raw=""
  for value in $(openssl asn1parse -inform DER -in "$tmp/sig.der" | awk -F: '/INTEGER/ {print $NF}'); do
    raw+=$(printf '%064s' "$value" | tr ' ' 0)
  done
  printf '%s.%s\n' "$input" "$(printf '%s' "$raw" | xxd -r -p | b64url)"
}

jws leaf intermediate > cli/valid.jws
jws leaf intermediate der > cli/der-signature.jws
jws leaf_no_oid intermediate > cli/leaf-without-oid.jws
jws leaf_under_no_oid intermediate_no_oid > cli/intermediate-without-oid.jws
echo "signedDate $signed_date" > cli/README.txt
echo "fixtures written to $(pwd)/cli"
