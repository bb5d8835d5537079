export default {
  tasks: [
    {
      created_by: 14000048691,
      agent_id: 14000043616,
      id: 48,
      status: 1,
      parent_id: 589,
      parent_type: "Ticket",
      due_date: "2021-11-24T11:30:00Z",
      notify_before: 3600,
      title: "Renew license",
      description: "Renew Software license",
      created_at: "2021-11-22T16:58:45Z",
      updated_at: "2021-11-22T16:58:45Z",
      closed_at: "2021-11-22T16:58:45Z",
      group_id: 14000184589,
      start_date: "2021-11-22T16:58:45Z"
    }
  ]
};
