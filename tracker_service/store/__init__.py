"""The tracker's store. The job, invite, credit, node speed and model-source tables
register on the shared ``Base`` here, so every importer of ``tables`` (Alembic's env,
the schema test) sees them too."""

from tracker_service.store import credit_tables as credit_tables
from tracker_service.store import invite_tables as invite_tables
from tracker_service.store import job_tables as job_tables
from tracker_service.store import model_sources as model_sources
from tracker_service.store import speed_tables as speed_tables
