"""This computer's identity: its key pair, where the private key is kept, what it signs.

    keypair.py       NodeIdentity: the Ed25519 key pair, the node id derived from it
    keystore.py      where the private key lives: the OS keyring, or an owner-only file
    signing.py       canonical JSON and the signed forms put on the wire (signed requests)
    private_file.py  write a secret file so that a crash never leaves half of it
    windows_acl.py   owner-only files on Windows: the ACL that mode 0600 is elsewhere

Lower floors: core.paths and core.errors only. Everything that talks to a tracker
or a peer (core.network, core.dataplane, core.jobs, core.node) signs through it.
"""
