"""A bundle manifest's hashes and layout as attn-compile writes them, for
tests that edit a manifest as a deliberate editor would: BLAKE2b-256 of
content (runtime/bundle/BundleSignature.h's contentHash), its URL-safe
base64 spelling in the kernel table's "hashes", and the manifest's own hash
over its text without the manifest_hash and signature lines
(runtime/bundle/Bundle.h): each record of a table (each column of the
kernel table) on a line of its own, dumped compactly with sorted keys
(nlohmann::json's dump()). A variant record is [name, parameters,
entries], its parameters [index into parameter_keys, values...]:
parameters() and set_parameters() read and write them as a dict."""
import base64
import hashlib
import json

TABLES = ("kinds", "bound_shapes", "bounds", "kernels", "plans",
          "parameter_keys", "variants")


def content_hash(data):
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def hash_to_base64(hex_hash):
    return base64.urlsafe_b64encode(bytes.fromhex(hex_hash)).decode().rstrip("=")


def hash_from_base64(text):
    return base64.urlsafe_b64decode(text + "=").hex()


# Characters of one hash in the kernel table's "hashes" column.
HASH_CHARS = 43


def kernel_hash(manifest, index):
    """Kernel `index`'s hash in hex, from the "hashes" column."""
    at = HASH_CHARS * index
    return hash_from_base64(manifest["kernels"]["hashes"][at:at + HASH_CHARS])


def set_kernel_hash(manifest, index, hex_hash):
    """Gives kernel `index` the hash `hex_hash` in the "hashes" column."""
    hashes, at = manifest["kernels"]["hashes"], HASH_CHARS * index
    manifest["kernels"]["hashes"] = (hashes[:at] + hash_to_base64(hex_hash) +
                                     hashes[at + HASH_CHARS:])


def _compact(value):
    return json.dumps(value, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False)


def _signed_text(manifest):
    text = ('{"format_version": ' + _compact(manifest["format_version"]) +
            ',\n"compiler": ' + _compact(manifest["compiler"]))
    for table in TABLES:
        if table not in manifest:
            continue
        value = manifest[table]
        text += ',\n"%s": ' % table
        if isinstance(value, list):
            text += "[" + "".join(("\n " if i == 0 else ",\n ") + _compact(v)
                                  for i, v in enumerate(value)) + "]"
        elif isinstance(value, dict):
            text += "{" + "".join(
                ("\n " if i == 0 else ",\n ") + _compact(k) + ": " +
                _compact(value[k]) for i, k in enumerate(sorted(value))) + "}"
        else:
            text += _compact(value)
    return text + "}\n"


def digest(manifest):
    return content_hash(_signed_text(manifest).encode())


def manifest_text(manifest):
    """The manifest as attn-compile lays it out, with its true hash."""
    text = _signed_text(manifest)
    lines = '"manifest_hash": "%s",\n' % content_hash(text.encode())
    if "signature" in manifest:
        lines += '"signature": %s,\n' % _compact(manifest["signature"])
    second = text.index("\n", text.index("\n") + 1) + 1
    return text[:second] + lines + text[second:]


def parameters(manifest, variant):
    """A variant record's parameters as a dict."""
    keys = manifest["parameter_keys"][variant[1][0]]
    return dict(zip(keys, variant[1][1:]))


def set_parameters(manifest, variant, params):
    """Gives a variant record `params` (a dict), adding their keys to
    parameter_keys when new."""
    keys = sorted(params)
    table = manifest["parameter_keys"]
    if keys not in table:
        table.append(keys)
    variant[1] = [table.index(keys)] + [params[k] for k in keys]
