export default {
  time_entries: [
    {
      id: 14702899,
      task_id: 45,
      parent_id: 500,
      parent_type: "Ticket",
      start_time: "2021-10-15T12:31:42Z",
      time_spent: "10:15",
      timer_running: true,
      billable: true,
      agent_id: 14007423,
      note: "Spent time on task",
      created_at: "2021-10-15T12:31:42Z",
      updated_at: "2021-10-15T12:31:42Z",
      executed_at: "2021-10-15T12:31:00Z",
      custom_fields: {
        field1: "Value 1",
        field2: "Value 2"
      }
    }
  ]
};
