"""Files ``callscale init`` copies into a team's repository (:mod:`callscale.init`)."""
