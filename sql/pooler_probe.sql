SELECT current_setting('pgcost.probe', true)
