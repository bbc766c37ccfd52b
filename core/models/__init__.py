"""Model artifacts on disk: the packaged default model, hub fetches, manifests."""
