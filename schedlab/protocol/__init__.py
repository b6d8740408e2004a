"""Everything that knows Batsim 4's JSON (jobs, profiles, messages) and its ZeroMQ transport."""
