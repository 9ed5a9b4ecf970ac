#!/usr/bin/env bash
# Generates the committed StoreKit 1 receipt fixtures in receipts/ with the openssl CLI only,
# independently of the Swift code under test: an Apple-shaped RSA chain (test root; intermediate
# with the WWDR marker 1.2.840.113635.100.6.2.1; leaf with the receipt-signing marker
# 1.2.840.113635.100.6.11.1, both non-critical DER NULL like Apple's), receipt payloads built with
# `openssl asn1parse -genconf` (SET of SEQUENCE { INTEGER type, INTEGER version, OCTET STRING }),
# and PKCS#7 SignedData from `openssl smime -sign -nodetach -binary` (no signed attributes, like
# Apple, unless noted). Fixed validity windows via `openssl ca -startdate/-enddate`:
#   root          2020-01-01 .. 2040-01-01
#   intermediate  2020-01-01 .. 2035-01-01
#   leaf          2024-01-01 .. 2026-01-01   (receipts are created 2025-01-01T00:00:00Z)
# Run once from any directory; commit the outputs.
#
#   receipts/root.pem                     the test trust anchor
#   receipts/valid.b64                    valid receipt (bundle com.example.receipts, ProductionSandbox, 2 purchases)
#   receipts/signed-attributes.b64        same payload, CMS signed attributes (messageDigest) present
#   receipts/sha1.b64                     same payload, SHA-1 content digest (like pre-2023 receipts)
#   receipts/md5.b64                      same payload, MD5 content digest (must be rejected)
#   receipts/leaf-without-oid.b64         leaf lacks 1.2.840.113635.100.6.11.1
#   receipts/intermediate-without-oid.b64 intermediate lacks 1.2.840.113635.100.6.2.1
#   receipts/leaf-under-root.b64          leaf issued by the root directly (two-level path)
#   receipts/signed-by-intermediate.b64   same three certificates, but the intermediate signs
#   receipts/self-signed.b64              signed by a lone self-signed certificate (like Xcode's)
#   receipts/expired-at-creation.b64      created 2026-06-01, after the leaf expired
#   receipts/not-yet-valid-at-creation.b64  created 2023-06-01, before the leaf's notBefore
#   receipts/no-creation-date.b64         no attribute 12 (the verifier falls back to its clock)
#   receipts/invalid-date.b64             creation date "2025-13-01T00:00:00Z"
#   receipts/no-bundle-id.b64             no attribute 2
#   receipts/bundle-id-integer.b64        attribute 2 holds an INTEGER
#   receipts/duplicate-bundle-id.b64      attribute 2 twice
#   receipts/xcode-type.b64               receipt type "Xcode"
#   receipts/certs-only.b64               degenerate SignedData with certificates only (crl2pkcs7)
#   receipts/detached.b64                 valid signature, but the content is detached
#   receipts/deep-content.b64             signed content is 40 nested SETs (asn1parse -genconf stops near 50)
set -euo pipefail
cd "$(dirname "$0")"
rm -rf receipts && mkdir receipts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/ext.cnf" <<'CNF'
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
[self_signed]
basicConstraints = critical, CA:TRUE
keyUsage = critical, digitalSignature, keyCertSign
subjectKeyIdentifier = hash
CNF

mkdir "$tmp/newcerts" && touch "$tmp/index.txt" && echo 1000 > "$tmp/serial"
cat > "$tmp/ca.cnf" <<CNF
[ca]
default_ca = test_ca
[test_ca]
database = $tmp/index.txt
new_certs_dir = $tmp/newcerts
serial = $tmp/serial
default_md = sha256
policy = any_policy
unique_subject = no
email_in_dn = no
[any_policy]
countryName = optional
organizationName = optional
commonName = supplied
CNF

key() { openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/$1.key" 2>/dev/null; }
csr() { openssl req -new -key "$tmp/$1.key" -subj "/C=US/O=receiptd receipt fixtures/CN=$2" -out "$tmp/$1.csr"; }
# issue <name> <issuer|self> <extensions> <start> <end>
issue() {
  local signer=(-cert "$tmp/$2.pem" -keyfile "$tmp/$2.key")
  [ "$2" = self ] && signer=(-selfsign -keyfile "$tmp/$1.key")
  openssl ca -batch -notext -config "$tmp/ca.cnf" "${signer[@]}" -in "$tmp/$1.csr" -out "$tmp/$1.pem" \
    -startdate "$4" -enddate "$5" -extfile "$tmp/ext.cnf" -extensions "$3" 2>/dev/null
}

key root; csr root "Receipt Test Root CA"; issue root self root 200101000000Z 400101000000Z
key intermediate; csr intermediate "Receipt Test WWDR CA"; issue intermediate root intermediate 200101000000Z 350101000000Z
key intermediate_no_oid; csr intermediate_no_oid "Receipt Test CA without OID"
issue intermediate_no_oid root intermediate_no_oid 200101000000Z 350101000000Z
key leaf; csr leaf "Receipt Test Signing"; issue leaf intermediate leaf 240101000000Z 260101000000Z
key leaf_no_oid; csr leaf_no_oid "Receipt Test Signing without OID"; issue leaf_no_oid intermediate leaf_no_oid 240101000000Z 260101000000Z
key leaf_under_no_oid; csr leaf_under_no_oid "Receipt Test Signing under CA without OID"
issue leaf_under_no_oid intermediate_no_oid leaf 240101000000Z 260101000000Z
key leaf_under_root; csr leaf_under_root "Receipt Test Signing under root"; issue leaf_under_root root leaf 240101000000Z 260101000000Z
key lone; csr lone "StoreKit"; issue lone self self_signed 200101000000Z 400101000000Z
cp "$tmp/root.pem" receipts/root.pem

# payload <file> <creation date> <extra receipt-level lines> : writes a DER receipt payload.
# Attribute types: 0 type, 2 bundle id, 3 app version, 4 opaque, 5 SHA-1 hash, 12 creation,
# 17 in-app, 18 original purchase date, 19 original version, 9999 unknown (kept raw).
payload() {
  local file=$1 created=$2 type=${4:-ProductionSandbox}
  local bundle=${3-"bundle = SEQUENCE:a_bundle"}
  local creation="created = SEQUENCE:a_created"
  [ "$created" = none ] && creation=""
  cat > "$tmp/payload.cnf" <<CNF
asn1 = SET:receipt
[receipt]
type = SEQUENCE:a_type
$bundle
version = SEQUENCE:a_version
opaque = SEQUENCE:a_opaque
hash = SEQUENCE:a_hash
$creation
original_date = SEQUENCE:a_original_date
original_version = SEQUENCE:a_original_version
unknown = SEQUENCE:a_unknown
purchase1 = SEQUENCE:a_purchase1
purchase2 = SEQUENCE:a_purchase2
[a_type]
t = INTEGER:0
v = INTEGER:1
value = OCTWRAP,UTF8String:$type
[a_bundle]
t = INTEGER:2
v = INTEGER:1
value = OCTWRAP,UTF8String:com.example.receipts
[a_bundle_integer]
t = INTEGER:2
v = INTEGER:1
value = OCTWRAP,INTEGER:42
[a_version]
t = INTEGER:3
v = INTEGER:1
value = OCTWRAP,UTF8String:7.1
[a_opaque]
t = INTEGER:4
v = INTEGER:2
value = FORMAT:HEX,OCTETSTRING:0102030405060708
[a_hash]
t = INTEGER:5
v = INTEGER:1
value = FORMAT:HEX,OCTETSTRING:00112233445566778899AABBCCDDEEFF00112233
[a_created]
t = INTEGER:12
v = INTEGER:1
value = OCTWRAP,IA5STRING:$created
[a_original_date]
t = INTEGER:18
v = INTEGER:1
value = OCTWRAP,IA5STRING:2024-06-01T12:00:00Z
[a_original_version]
t = INTEGER:19
v = INTEGER:1
value = OCTWRAP,UTF8String:1.0
[a_unknown]
t = INTEGER:9999
v = INTEGER:1
value = OCTWRAP,UTF8String:future attribute
[a_purchase1]
t = INTEGER:17
v = INTEGER:1
value = OCTWRAP,SET:purchase1
[purchase1]
quantity = SEQUENCE:p1_quantity
product = SEQUENCE:p1_product
transaction = SEQUENCE:p1_transaction
purchased = SEQUENCE:p1_purchased
original_transaction = SEQUENCE:p1_original_transaction
original_purchased = SEQUENCE:p1_original_purchased
product_type = SEQUENCE:p1_product_type
expires = SEQUENCE:p1_expires
web_order = SEQUENCE:p1_web_order
cancelled = SEQUENCE:p1_cancelled
trial = SEQUENCE:p1_trial
intro = SEQUENCE:p1_intro
[p1_quantity]
t = INTEGER:1701
v = INTEGER:1
value = OCTWRAP,INTEGER:1
[p1_product]
t = INTEGER:1702
v = INTEGER:1
value = OCTWRAP,UTF8String:com.example.receipts.monthly
[p1_transaction]
t = INTEGER:1703
v = INTEGER:1
value = OCTWRAP,UTF8String:4000000000000001
[p1_purchased]
t = INTEGER:1704
v = INTEGER:1
value = OCTWRAP,IA5STRING:2024-12-01T10:00:00Z
[p1_original_transaction]
t = INTEGER:1705
v = INTEGER:1
value = OCTWRAP,UTF8String:4000000000000001
[p1_original_purchased]
t = INTEGER:1706
v = INTEGER:1
value = OCTWRAP,IA5STRING:2024-12-01T10:00:00Z
[p1_product_type]
t = INTEGER:1707
v = INTEGER:1
value = OCTWRAP,INTEGER:3
[p1_expires]
t = INTEGER:1708
v = INTEGER:1
value = OCTWRAP,IA5STRING:2025-01-01T10:00:00Z
[p1_web_order]
t = INTEGER:1711
v = INTEGER:1
value = OCTWRAP,INTEGER:4000000012345678
[p1_cancelled]
t = INTEGER:1712
v = INTEGER:1
value = OCTWRAP,IA5STRING:
[p1_trial]
t = INTEGER:1713
v = INTEGER:1
value = OCTWRAP,INTEGER:1
[p1_intro]
t = INTEGER:1719
v = INTEGER:1
value = OCTWRAP,INTEGER:0
[a_purchase2]
t = INTEGER:17
v = INTEGER:1
value = OCTWRAP,SET:purchase2
[purchase2]
quantity = SEQUENCE:p2_quantity
product = SEQUENCE:p2_product
transaction = SEQUENCE:p2_transaction
purchased = SEQUENCE:p2_purchased
cancelled = SEQUENCE:p2_cancelled
offer = SEQUENCE:p2_offer
unknown = SEQUENCE:p2_unknown
[p2_quantity]
t = INTEGER:1701
v = INTEGER:1
value = OCTWRAP,INTEGER:3
[p2_product]
t = INTEGER:1702
v = INTEGER:1
value = OCTWRAP,UTF8String:com.example.receipts.coins
[p2_transaction]
t = INTEGER:1703
v = INTEGER:1
value = OCTWRAP,UTF8String:4000000000000002
[p2_purchased]
t = INTEGER:1704
v = INTEGER:1
value = OCTWRAP,IA5STRING:2024-12-24T18:30:00.250+01:00
[p2_cancelled]
t = INTEGER:1712
v = INTEGER:1
value = OCTWRAP,IA5STRING:2024-12-25T00:00:00Z
[p2_offer]
t = INTEGER:1721
v = INTEGER:1
value = OCTWRAP,UTF8String:winter-offer
[p2_unknown]
t = INTEGER:1799
v = INTEGER:1
value = OCTWRAP,INTEGER:-5
CNF
  openssl asn1parse -genconf "$tmp/payload.cnf" -out "$file" -noout
}

# sign <payload> <signer> <chain: space-separated cert names> [md] [attributes]
sign() {
  local certs=() attr=(-noattr)
  if [ -n "$3" ]; then
    : > "$tmp/chain.pem"
    for name in $3; do cat "$tmp/$name.pem" >> "$tmp/chain.pem"; done
    certs=(-certfile "$tmp/chain.pem")
  fi
  [ "${5:-}" = attributes ] && attr=()
  openssl smime -sign -binary -nodetach -outform DER -md "${4:-sha256}" "${attr[@]}" \
    -signer "$tmp/$2.pem" -inkey "$tmp/$2.key" "${certs[@]}" -in "$1" | base64 -w0
  echo
}

created=2025-01-01T00:00:00Z
payload "$tmp/valid.der" $created
sign "$tmp/valid.der" leaf "intermediate root" > receipts/valid.b64
sign "$tmp/valid.der" leaf "intermediate root" sha256 attributes > receipts/signed-attributes.b64
sign "$tmp/valid.der" leaf "intermediate root" sha1 > receipts/sha1.b64
sign "$tmp/valid.der" leaf "intermediate root" md5 > receipts/md5.b64
sign "$tmp/valid.der" leaf_no_oid "intermediate root" > receipts/leaf-without-oid.b64
sign "$tmp/valid.der" leaf_under_no_oid "intermediate_no_oid root" > receipts/intermediate-without-oid.b64
sign "$tmp/valid.der" leaf_under_root "root" > receipts/leaf-under-root.b64
# Same certificates field as valid.b64 (intermediate, root, leaf in that order), the CA key signing.
cat "$tmp/intermediate.pem" "$tmp/root.pem" "$tmp/leaf.pem" > "$tmp/same.pem"
openssl smime -sign -binary -nodetach -outform DER -md sha256 -noattr -nocerts -signer "$tmp/intermediate.pem" \
  -inkey "$tmp/intermediate.key" -certfile "$tmp/same.pem" -in "$tmp/valid.der" | base64 -w0 > receipts/signed-by-intermediate.b64
echo >> receipts/signed-by-intermediate.b64
sign "$tmp/valid.der" lone "" > receipts/self-signed.b64

payload "$tmp/p.der" 2026-06-01T00:00:00Z; sign "$tmp/p.der" leaf "intermediate root" > receipts/expired-at-creation.b64
payload "$tmp/p.der" 2023-06-01T00:00:00Z; sign "$tmp/p.der" leaf "intermediate root" > receipts/not-yet-valid-at-creation.b64
payload "$tmp/p.der" none; sign "$tmp/p.der" leaf "intermediate root" > receipts/no-creation-date.b64
payload "$tmp/p.der" 2025-13-01T00:00:00Z; sign "$tmp/p.der" leaf "intermediate root" > receipts/invalid-date.b64
payload "$tmp/p.der" $created ""; sign "$tmp/p.der" leaf "intermediate root" > receipts/no-bundle-id.b64
payload "$tmp/p.der" $created "bundle = SEQUENCE:a_bundle_integer"
sign "$tmp/p.der" leaf "intermediate root" > receipts/bundle-id-integer.b64
payload "$tmp/p.der" $created "bundle = SEQUENCE:a_bundle
bundle_again = SEQUENCE:a_bundle"
sign "$tmp/p.der" leaf "intermediate root" > receipts/duplicate-bundle-id.b64
payload "$tmp/p.der" $created "bundle = SEQUENCE:a_bundle" Xcode; sign "$tmp/p.der" leaf "intermediate root" > receipts/xcode-type.b64

{ echo "asn1 = SET:n0"; for i in $(seq 0 38); do echo "[n$i]"; echo "x = SET:n$((i + 1))"; done; echo "[n39]"; echo "x = INTEGER:1"; } > "$tmp/deep.cnf"
openssl asn1parse -genconf "$tmp/deep.cnf" -out "$tmp/deep.der" -noout
sign "$tmp/deep.der" leaf "intermediate root" > receipts/deep-content.b64

openssl crl2pkcs7 -nocrl -certfile "$tmp/leaf.pem" -outform DER | base64 -w0 > receipts/certs-only.b64; echo >> receipts/certs-only.b64
openssl smime -sign -binary -outform DER -noattr -signer "$tmp/leaf.pem" -inkey "$tmp/leaf.key" -in "$tmp/valid.der" \
  | base64 -w0 > receipts/detached.b64; echo >> receipts/detached.b64

echo "receipt fixtures written to $(pwd)/receipts"
