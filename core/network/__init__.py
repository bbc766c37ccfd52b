"""Joining a network and talking to its tracker: which tracker, how it is trusted, what is said.

    invites.py         a join link (meshnet://join?...): check the tracker's signed key
                       against the link's fingerprint, then trade the code for a token
    tracker_key.py     the tracker key fingerprint a link names (same shape as a node id)
    joined_network.py  the network a profile joined, one 0600 JSON file per profile
    join_tokens.py     join tokens of private trackers, in the OS keyring per tracker URL
    node_network.py    which tracker `meshnet-node run` serves: --tracker, else the joined one
    tls_trust.py       what an https:// tracker's certificate is checked against
    tracker_client.py  the signed tracker API: register, heartbeat, deregister, redeem, link
    credit_account.py  the signed statement linking this computer to a credit account

Lower floors: core.identity.keypair (keys, signatures), core.paths, core.errors. The node
(core.node), the jobs executor (core.jobs) and the app call it; it calls none of them.
"""
